package recorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzReadResult: any input ReadResult accepts is a fixed point once
// re-encoded: decode → encode → decode gives the same result, and encoding
// that again gives the same bytes. Inputs it refuses get an error naming
// the file. Reading keeps what each histogram string decodes to: the string
// as read (old forms upgraded to the standard one) decodes exactly when the
// input's did, to the same histogram, and one that decodes is written in
// the standard form. Seeds hold histograms in both forms.
func FuzzReadResult(f *testing.F) {
	r := New(nil)
	recs := sampleRecords()
	for i := range recs {
		r.Add(&recs[i])
	}
	res := &Result{Tool: "openload", Counts: Counts{Expected: 5}, Started: time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))}
	if err := r.Fill(res); err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteResult(&b, res); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	full := standardResult(f)
	b.Reset()
	if err := WriteResult(&b, full); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	for _, p := range histogramStrings(full) {
		*p = oldForm(*p)
	}
	b.Reset()
	if err := WriteResult(&b, full); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	one := NewHistogram()
	_ = one.RecordValue(1500)
	small, err := EncodeHistogram(one)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fmt.Sprintf(`{"version":1,"histograms":{"response":%q,"service":%q,"send_delay":%q}}`, small, oldForm(small), small[:len(small)-4]))
	f.Add(`{"version":1}`)
	f.Add(`{"version":1,"status":{"200":3},"error_kinds":null,"started":"2025-01-01T00:00:00.5-07:00"}`)
	f.Add(`{"version":2}`)
	f.Add(`{"version":1,"counts":{"expected":1e308,"scheduled":-1}} trailing`)
	f.Fuzz(func(t *testing.T, in string) {
		res, err := ReadResult(strings.NewReader(in), "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var raw Result
		if err := json.NewDecoder(strings.NewReader(in)).Decode(&raw); err != nil {
			t.Fatalf("ReadResult accepted what encoding/json refuses: %v", err)
		}
		rawStrs := histogramStrings(&raw)
		for name, s := range histogramStrings(res) {
			h, err := DecodeHistogram(*s)
			rawH, rawErr := DecodeHistogram(*rawStrs[name])
			if (err == nil) != (rawErr == nil) || err == nil && !h.Equals(rawH) {
				t.Fatalf("%s: %.40q read as %.40q: decodes %v, before %v", name, *rawStrs[name], *s, err, rawErr)
			}
			if err == nil && !strings.HasPrefix(*s, "HIST") {
				t.Fatalf("%s: %.40q is not in the standard form", name, *s)
			}
		}
		var b1 bytes.Buffer
		if err := WriteResult(&b1, res); err != nil {
			t.Fatalf("accepted result does not encode: %v", err)
		}
		res2, err := ReadResult(bytes.NewReader(b1.Bytes()), "again.json")
		if err != nil {
			t.Fatalf("re-encoded result refused: %v\n%s", err, b1.String())
		}
		if !res.Started.Equal(res2.Started) {
			t.Fatalf("started %v became %v", res.Started, res2.Started)
		}
		// time.Time's location pointers differ between decodes; the
		// instant is compared above.
		a, c := *res, *res2
		a.Started, c.Started = time.Time{}, time.Time{}
		if !reflect.DeepEqual(a, c) {
			t.Fatalf("decode → encode → decode differs:\n%+v\n%+v", a, c)
		}
		var b2 bytes.Buffer
		if err := WriteResult(&b2, res2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b1.String(), b2.String())
		}
	})
}

// entryRecord is the record a log entry was written from.
func entryRecord(t *testing.T, e LogEntry) Record {
	k, ok := ParseKind(e.Error)
	if !ok {
		t.Fatalf("reader accepted unknown error %q", e.Error)
	}
	return Record{Seq: e.Seq, Scheduled: e.Scheduled, Sent: e.Sent, Done: e.Done, WasSent: e.WasSent,
		Status: e.Status, Kind: k, Attempts: e.Attempts}
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
