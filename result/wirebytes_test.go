package result

import "testing"

// TestWireBytesMerge: a merge adds the shards' bytes; when one shard's
// result has none (written before they were counted), the whole has none
// rather than a part's; the parts are left as they were.
func TestWireBytesMerge(t *testing.T) {
	a := &Wire{Attempts: 1, Counted: true, Bytes: &Bytes{Written: 10, Read: 20}}
	b := &Wire{Attempts: 2, Counted: true, Bytes: &Bytes{Written: 1, Read: 2}}
	m := a.merge(b)
	if m.Bytes == nil || *m.Bytes != (Bytes{Written: 11, Read: 22}) || *a.Bytes != (Bytes{Written: 10, Read: 20}) {
		t.Errorf("merged %+v, a now %+v", m.Bytes, a.Bytes)
	}
	if m := (*Wire)(nil).merge(b); m.Bytes == nil || *m.Bytes != *b.Bytes || m.Bytes == b.Bytes {
		t.Errorf("nil merged with b: %+v", m.Bytes)
	}
	if m := a.merge(&Wire{Attempts: 3, Counted: true}); m.Bytes != nil {
		t.Errorf("merged with an old result: %+v, want none", *m.Bytes)
	}
}
