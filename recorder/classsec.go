package recorder

import "time"

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

// NoEvent is the class value that, by convention, says "no such event
// happened" (the stub's X-Stub-Shadow: none = the request asked for no
// shadow score). A table holding it besides other values gets
// ClassValue.Per100Rest for those others.
const NoEvent = "none"

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
		value = NoClass
	}
	j, ok := c.col[value]
	if !ok && len(c.names) >= MaxClassValues {
		value = OtherClass
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

// merge adds o's counts into c.
func (c *classSeconds) merge(o *classSeconds) {
	for i, row := range o.secs {
		for j, n := range row {
			if n != 0 {
				c.add(time.Duration(i)*time.Second, o.names[j], n)
			}
		}
	}
}

// addClassSeconds counts rec's class values in the second it ended.
func (r *Recorder) addClassSeconds(rec *Record) {
	for i := range r.classes {
		r.classes[i].sec.add(rec.Done, rec.Class[i], 1)
	}
}

// fillClassSeconds sets Second.Classes of timeline (the result's copy)
// for the tables the result shows.
func (r *Recorder) fillClassSeconds(timeline []Second) []Second {
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
					timeline = append(timeline, Second{})
				}
				timeline[i].addClass(t.header, t.sec.names[j], n)
			}
		}
	}
	return timeline
}

// addClass adds n to the second's count of header = value.
func (s *Second) addClass(header, value string, n int64) {
	if s.Classes == nil {
		s.Classes = map[string]map[string]int64{}
	}
	m := s.Classes[header]
	if m == nil {
		m = map[string]int64{}
		s.Classes[header] = m
	}
	m[value] += n
}

// setPer100Rest sets Per100Rest of t's values when t holds NoEvent and at
// least one answer carried another value: each such value's count per 100
// answers that carried the header with a value other than NoEvent (NoClass
// answers did not carry it). NoEvent and NoClass get none.
func (t *ClassTable) setPer100Rest() {
	var rest int64
	hasNone := false
	for _, v := range t.Values {
		switch v.Value {
		case NoEvent:
			hasNone = true
		case NoClass:
		default:
			rest += v.Count
		}
	}
	for i := range t.Values {
		v := &t.Values[i]
		v.Per100Rest = 0
		if hasNone && rest > 0 && v.Value != NoEvent && v.Value != NoClass {
			v.Per100Rest = 100 * float64(v.Count) / float64(rest)
		}
	}
}
