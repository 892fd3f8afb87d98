package recorder

import (
	"time"

	"github.com/openload/openload/result"
)

// Per-second class counts and the share "per 100 of the rest".
//
// A class table says how many answers carried each value over the whole
// run; a fault that lasts two seconds of sixty hides in such a total. So
// each table also counts its values per second of the run, by the second
// the request ended in (as Second.Completed and Second.Errors count it),
// warm-up requests included like every other per-second count. The
// recorder keeps them as small rows indexed by column (a value's place in
// the order first seen), so that Add allocates only when a second or a
// value is new; Fill turns them into Second.Classes.

// classSeconds counts one class table's values per second.
type classSeconds struct {
	col   map[string]int // value → column
	names []string       // column → value
	secs  [][]int64      // [second][column]
}

// add counts n requests of value that ended at offset at. Values beyond
// MaxClassValues count as OtherClass, as in the table.
func (c *classSeconds) add(at time.Duration, value string, n int64) {
	if value == "" {
		value = result.NoClass
	}
	j, ok := c.col[value]
	if !ok && len(c.names) >= MaxClassValues {
		value = result.OtherClass
		j, ok = c.col[value]
	}
	if !ok {
		if c.col == nil {
			c.col = map[string]int{}
		}
		j = len(c.names)
		c.col[value] = j
		c.names = append(c.names, value)
	}
	i := max(int(at/time.Second), 0)
	for len(c.secs) <= i {
		c.secs = append(c.secs, nil)
	}
	row := c.secs[i]
	for len(row) <= j {
		row = append(row, 0)
	}
	row[j] += n
	c.secs[i] = row
}

// addClassSeconds counts rec's class values in the second it ended.
func (r *Recorder) addClassSeconds(rec *Record) {
	for i := range r.classes {
		r.classes[i].sec.add(rec.Done, rec.Class[i], 1)
	}
}

// fillClassSeconds sets Second.Classes of timeline (the result's copy)
// for the tables the result shows.
func (r *Recorder) fillClassSeconds(timeline []result.Second) []result.Second {
	for _, t := range r.classes {
		if t.auto && !t.seen() {
			continue
		}
		for i, row := range t.sec.secs {
			for j, n := range row {
				if n == 0 {
					continue
				}
				for len(timeline) <= i {
					timeline = append(timeline, result.Second{})
				}
				timeline[i].AddClass(t.header, t.sec.names[j], n)
			}
		}
	}
	return timeline
}
