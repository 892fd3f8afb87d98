package loadtest

import (
	"flag"
	"fmt"
	"time"
)

// RunLength registers the -short and -d flags the examples share on fs:
// each run (what: "run", "cell", "row") lasts full, short with -short, or
// what -d says. Call the returned function after fs.Parse.
func RunLength(fs *flag.FlagSet, what string, full, short time.Duration) func() time.Duration {
	s := fs.Bool("short", false, fmt.Sprintf("%v per %s instead of %v", short, what, full))
	d := fs.Duration("d", 0, fmt.Sprintf("duration of each %s (overrides -short)", what))
	return func() time.Duration {
		switch {
		case *d > 0:
			return *d
		case *s:
			return short
		}
		return full
	}
}
