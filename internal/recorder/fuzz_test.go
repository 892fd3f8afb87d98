package recorder

import (
	"bytes"
	"strings"
	"testing"
)

// entryRecord is the record a log entry was written from.
func entryRecord(t *testing.T, e LogEntry) Record {
	k, ok := ParseKind(e.Error)
	if !ok {
		t.Fatalf("reader accepted unknown error %q", e.Error)
	}
	return Record{Seq: e.Seq, Scheduled: e.Scheduled, Sent: e.Sent, Done: e.Done, WasSent: e.WasSent,
		Status: e.Status, Kind: k, Attempts: e.Attempts, Target: uint32(max(e.Target, 0))}
}

// FuzzLogReader: every line LogReader accepts, written again by LogWriter
// and read back, gives the same entry; every error names the file and
// line.
func FuzzLogReader(f *testing.F) {
	var b bytes.Buffer
	lw := NewLogWriter(&b)
	recs := sampleRecords()
	for i := range recs {
		lw.Write(&recs[i])
	}
	lw.Flush()
	f.Add(b.String())
	f.Add(LogHeader + "\n0,0.000,,1.000,,1.000,,,unfinished,0\n")
	f.Add("seq,scheduled_ms,sent_ms,done_ms,service_ms,response_ms,send_delay_ms,status,error\n3,-0.5,1.25,2,,,,503,\n")
	f.Add(LogHeader + "\n1,9223372036854.775,0,0,,,,,,1\n")
	f.Add(LogHeader + "\n1,1.000,1.000,2.000,,,,200,reset,3\r\n\n")
	f.Add(LogHeader + "," + LogTargetColumn + "\n0,0.000,0.200,50.400,50.200,50.400,0.200,200,,1,3\n")
	f.Fuzz(func(t *testing.T, in string) {
		lr := NewLogReader(strings.NewReader(in), "fuzz.csv")
		var got []LogEntry
		for lr.Scan() {
			got = append(got, lr.Entry())
		}
		if err := lr.Err(); err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if len(got) > 0 && !strings.HasPrefix(err.Error(), "fuzz.csv:") {
				t.Fatalf("error after a line does not name it: %v", err)
			}
		}
		var out bytes.Buffer
		w := NewLogWriter(&out)
		w.target = lr.target // the column, as the log had it
		for _, e := range got {
			r := entryRecord(t, e)
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		lr2 := NewLogReader(bytes.NewReader(out.Bytes()), "again.csv")
		i := 0
		for lr2.Scan() {
			if i >= len(got) {
				t.Fatalf("more entries read back than written")
			}
			if e := lr2.Entry(); e != got[i] {
				t.Fatalf("entry %d: read %+v, written again and read back %+v\n%s", i, got[i], e, out.String())
			}
			i++
		}
		if err := lr2.Err(); err != nil && !(len(got) == 0 && strings.Contains(err.Error(), "empty")) {
			t.Fatalf("re-written log refused: %v\n%s", err, out.String())
		}
		if i != len(got) {
			t.Fatalf("read back %d entries of %d", i, len(got))
		}
	})
}
