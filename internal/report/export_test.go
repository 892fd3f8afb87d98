package report

import (
	"io"

	"github.com/openload/openload/result"
)

// StepStreamTable is the by-step table of streamed answers with its
// legend, for the external tests: the report reaches it only through
// SessionRuns, which says a legend once.
func StepStreamTable(w io.Writer, prefix string, steps []result.Part) error {
	return stepStreamTable(w, prefix, steps, legends{})
}
