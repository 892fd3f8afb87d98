package loadtest

import (
	"flag"
	"testing"
	"time"
)

func TestRunLength(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 40 * time.Second},
		{[]string{"-short"}, 10 * time.Second},
		{[]string{"-short", "-d", "2s"}, 2 * time.Second},
		{[]string{"-d", "90s"}, 90 * time.Second},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		length := RunLength(fs, "cell", 40*time.Second, 10*time.Second)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if got := length(); got != c.want {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
}
