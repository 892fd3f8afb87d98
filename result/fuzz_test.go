package result_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// FuzzReadResult: any input Read accepts is a fixed point once
// re-encoded: decode → encode → decode gives the same result, and encoding
// that again gives the same bytes. Inputs it refuses get an error naming
// the file. Reading keeps what each histogram string decodes to: the string
// as read (old forms upgraded to the standard one) decodes exactly when the
// input's did, to the same histogram, and one that decodes is written in
// the standard form. Seeds hold histograms in both forms.
func FuzzReadResult(f *testing.F) {
	r := recorder.New(nil)
	for i := range 3 {
		d := time.Duration(i+1) * time.Millisecond
		rec := recorder.Record{Seq: uint64(i), Scheduled: d, Sent: d, Done: 2 * d, WasSent: true, Outcome: recorder.Completed, Status: 200, Attempts: 1}
		if i == 2 {
			rec.Outcome, rec.Kind, rec.Status = recorder.Failed, recorder.KindReset, 0
		}
		if err := r.Add(&rec); err != nil {
			f.Fatal(err)
		}
	}
	res := &result.Result{Tool: "openload", Counts: result.Counts{Expected: 5}, Started: time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))}
	if err := r.Fill(res); err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := result.Write(&b, res); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	full := standardResult(f)
	b.Reset()
	if err := result.Write(&b, full); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	for _, p := range histogramStrings(full) {
		*p = oldForm(*p)
	}
	b.Reset()
	if err := result.Write(&b, full); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	one := result.NewHistogram()
	_ = one.RecordValue(1500)
	small, err := result.EncodeHistogram(one)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fmt.Sprintf(`{"version":1,"histograms":{"response":%q,"service":%q,"send_delay":%q}}`, small, oldForm(small), small[:len(small)-4]))
	f.Add(`{"version":1}`)
	f.Add(`{"version":1,"status":{"200":3},"error_kinds":null,"started":"2025-01-01T00:00:00.5-07:00"}`)
	f.Add(`{"version":2}`)
	f.Add(`{"version":1,"counts":{"expected":1e308,"scheduled":-1}} trailing`)
	f.Fuzz(func(t *testing.T, in string) {
		res, err := result.Read(strings.NewReader(in), "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var raw result.Result
		if err := json.NewDecoder(strings.NewReader(in)).Decode(&raw); err != nil {
			t.Fatalf("ReadResult accepted what encoding/json refuses: %v", err)
		}
		rawStrs := histogramStrings(&raw)
		for name, s := range histogramStrings(res) {
			h, err := result.DecodeHistogram(*s)
			rawH, rawErr := result.DecodeHistogram(*rawStrs[name])
			if (err == nil) != (rawErr == nil) || err == nil && !h.Equals(rawH) {
				t.Fatalf("%s: %.40q read as %.40q: decodes %v, before %v", name, *rawStrs[name], *s, err, rawErr)
			}
			if err == nil && !strings.HasPrefix(*s, "HIST") {
				t.Fatalf("%s: %.40q is not in the standard form", name, *s)
			}
		}
		var b1 bytes.Buffer
		if err := result.Write(&b1, res); err != nil {
			t.Fatalf("accepted result does not encode: %v", err)
		}
		res2, err := result.Read(bytes.NewReader(b1.Bytes()), "again.json")
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
		if err := result.Write(&b2, res2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b1.String(), b2.String())
		}
	})
}
