package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestCellAndTable runs one cell of the matrix briefly (2× capacity for
// 2 s) and checks the experiment's plumbing: every request is accounted
// for, the class headers were counted, and the table prints the row. The
// model share at 2× capacity is capacity ÷ offered = 50 % in the long run;
// a 2 s run starts with empty queues (a burst of up to 12 admitted requests
// beyond capacity) and a busy machine can slow the model, so the bound is
// wide: 30–75 %.
func TestCellAndTable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 2 s load")
	}
	c, err := RunCell(context.Background(), Rows[0], 160, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Result.Counts
	if n.Scheduled != 320 || !n.Balanced() {
		t.Fatalf("counts %+v", n)
	}
	var fallbacks int64
	for _, v := range c.Fallback {
		fallbacks += v
	}
	if c.Model+fallbacks != n.Completed {
		t.Errorf("model %d + fallbacks %d ≠ completed %d", c.Model, fallbacks, n.Completed)
	}
	if s := c.ModelShare(); s < 0.3 || s > 0.75 {
		t.Errorf("model share %.2f at 2× capacity, want within [0.3, 0.75]", s)
	}
	var b bytes.Buffer
	if err := Table(&b, []Cell{c}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), Rows[0].Name) || !strings.Contains(b.String(), "model share") {
		t.Errorf("table:\n%s", b.String())
	}
}
