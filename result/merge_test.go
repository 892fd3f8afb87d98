package result_test

import (
	"maps"

	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// randomRecords draws a whole run's records: arrivals over 3 s, a mix of
// outcomes, statuses, a class header and two Server-Timing metrics.
func randomRecords(rng *rand.Rand) []recorder.Record {
	n := rng.IntN(400)
	recs := make([]recorder.Record, n)
	t := time.Duration(0)
	for j := range recs {
		t += time.Duration(rng.ExpFloat64() * float64(3*time.Second) / float64(n+1))
		r := recorder.Record{Seq: uint64(j), Scheduled: t, Sent: t + time.Duration(rng.IntN(2000))*time.Microsecond, WasSent: true,
			Target: uint32(rng.IntN(len(mixTargets)))}
		r.Done = r.Sent + time.Duration(rng.ExpFloat64()*float64(20*time.Millisecond))
		switch x := rng.IntN(20); {
		case x == 0:
			r.Outcome, r.Kind = recorder.Failed, recorder.KindRefused
		case x == 1:
			r.Outcome, r.Kind = recorder.TimedOut, recorder.KindTimeout
		default:
			r.Outcome, r.Status = recorder.Completed, []int{200, 200, 200, 503, 429}[rng.IntN(5)]
			r.Class[0] = []string{"model", "fallback", "", result.NoEvent}[rng.IntN(4)]
			r.Timings[0] = recorder.Timing{Name: "dwell", Dur: time.Duration(rng.IntN(5000)) * time.Microsecond}
			r.Timings[1] = recorder.Timing{Name: []string{"model", "queue"}[rng.IntN(2)], Dur: time.Duration(rng.IntN(9000)) * time.Microsecond}
			r.NTimings = 2
			// Some are gRPC calls, their code from the index (no draw,
			// so that the other figures are drawn as before).
			r.GRPC, r.GRPCStatus = r.Status == 200 && j%3 == 0, j%(result.GRPCCodes+1)
			// A streamed answer: its tokens evenly spaced after the first.
			r.Streamed, r.GotFirstByte = true, true
			r.FirstByte = r.Sent + time.Duration(rng.IntN(3000))*time.Microsecond
			r.FirstToken = r.FirstByte
			r.Events = 1 + rng.IntN(12)
			r.Tokens = r.Events
			r.LastToken = r.FirstToken + time.Duration(r.Events-1)*time.Duration(1+rng.IntN(30))*time.Millisecond
			r.Done = max(r.Done, r.LastToken)
			// Prompt and asked tokens, known for most requests.
			if rng.IntN(4) > 0 {
				r.PromptTokens, r.AskedTokens = 1+rng.IntN(5000), r.Events+rng.IntN(3)
			}
		}
		recs[j] = r
	}
	return recs
}

// mixTargets are the targets of the runs' request mix; a name may hold
// commas and colons.
var mixTargets = []string{"GET http://t/a", "checkout", "POST http://t:8080/b, c"}

var start = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

// shardResult records recs into a result; with of > 0, as shard index of of,
// keeping the records of index ≡ index (mod of).
func shardResult(t *testing.T, recs []recorder.Record, index, of int) *result.Result {
	t.Helper()
	rec := recorder.New(nil)
	rec.TrackClasses([]string{"X-Class"})
	rec.TrackTargets(mixTargets)
	rec.BoundDwell(2 * time.Millisecond)
	rec.StreamRun()
	rec.SetWarmup(300 * time.Millisecond)
	objs, err := recorder.ParseRequestObjectives("ttft<=2ms,tpot<=15ms")
	if err != nil {
		t.Fatal(err)
	}
	rec.SetRequestObjectives(objs)
	rec.Begin(start)
	for j := range recs {
		if of > 0 && j%of != index {
			continue
		}
		r := recs[j]
		if r.Events > 0 {
			evs := make([]recorder.TokenEvent, r.Events)
			for k := range evs {
				evs[k] = recorder.TokenEvent{At: r.FirstToken, Gap: -1}
				if k > 0 {
					gap := (r.LastToken - r.FirstToken) / time.Duration(r.Events-1)
					evs[k] = recorder.TokenEvent{At: r.FirstToken + time.Duration(k)*gap, Gap: gap}
				}
			}
			rec.AddTokens(evs)
		}
		if err := rec.Add(&r); err != nil {
			t.Fatal(err)
		}
	}
	res := &result.Result{Tool: "openload", Started: start, Config: result.Config{Target: "http://t/", Method: "GET", Arrival: "poisson", Rate: 100, Duration: "3s", Seed: 7}}
	if err := rec.Fill(res); err != nil {
		t.Fatal(err)
	}
	if of > 0 {
		res.Counts.Expected = float64(res.Counts.Scheduled)
		res.Config.Shard = &result.ShardConfig{Of: of, Indexes: []int{index}, Whole: "poisson 100/s for 3s (seed 7)", WholeExpected: 300, WholeScheduled: int64(len(recs))}
		res.Shards = []result.ShardRun{result.OwnShardRun(res)}
	}
	return res
}

func jsonOf(t *testing.T, r *result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := result.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func merge(t *testing.T, rs ...*result.Result) *result.Result {
	t.Helper()
	in := make([]result.MergeInput, len(rs))
	for i, r := range rs {
		in[i] = result.MergeInput{Name: "r" + strings.Repeat("'", i), Result: r}
		if s := r.Config.Shard; len(s.Indexes) == 1 {
			in[i].Name = "shard-" + string(rune('0'+s.Indexes[0])) + ".json"
		}
	}
	m, err := result.Merge(in...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMergeProperties: over random runs split into random numbers of
// shards, merging in any order and any grouping gives the same result,
// and that result holds what one generator recording every request
// holds: the same counts, statuses, error kinds, histograms (bucket for
// bucket), timeline, classes, Server-Timing metrics and targets (their
// histograms byte for byte).
func TestMergeProperties(t *testing.T) {
	for seed := range uint64(5) { // each seed encodes ~100 histograms (zlib, about 1 MB of state each): seconds under -race
		rng := rand.New(rand.NewPCG(seed, 1))
		recs := randomRecords(rng)
		of := 2 + int(seed) // 2 … 6 shards
		shards := make([]*result.Result, of)
		for i := range of {
			shards[i] = shardResult(t, recs, i, of)
		}
		flat := merge(t, shards...)
		want := jsonOf(t, flat)

		// Order does not matter.
		perm := slices.Clone(shards)
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if got := jsonOf(t, merge(t, perm...)); got != want {
			t.Fatalf("seed %d: merge in another order differs", seed)
		}
		// Grouping does not matter: merge random groups, then the groups.
		var groups []*result.Result
		for rest := perm; len(rest) > 0; {
			k := 1 + rng.IntN(len(rest))
			groups = append(groups, merge(t, rest[:k]...))
			rest = rest[k:]
		}
		if got := jsonOf(t, merge(t, groups...)); got != want {
			t.Fatalf("seed %d: merge of %d groups differs from the flat merge of %d shards", seed, len(groups), of)
		}
		if of >= 3 { // a, (b, c) against (a, b), c
			left := merge(t, merge(t, shards[0], shards[1]), shards[2])
			right := merge(t, shards[0], merge(t, shards[1], shards[2]))
			if jsonOf(t, left) != jsonOf(t, right) {
				t.Fatalf("seed %d: merge is not associative", seed)
			}
		}

		// The complete merge holds what one generator would.
		one := shardResult(t, recs, 0, 0)
		if !flat.Config.Shard.Complete() || flat.Counts != one.Counts && (flat.Counts.Scheduled != one.Counts.Scheduled || flat.Counts.Expected != 300) {
			t.Fatalf("seed %d: counts %+v, one generator %+v", seed, flat.Counts, one.Counts)
		}
		c1, c2 := flat.Counts, one.Counts
		c1.Expected, c2.Expected = 0, 0
		if c1 != c2 {
			t.Fatalf("seed %d: counts %+v, one generator %+v", seed, c1, c2)
		}
		if flat.Warmup == nil || one.Warmup == nil || *flat.Warmup != *one.Warmup {
			t.Fatalf("seed %d: warm-up %+v, one generator %+v", seed, flat.Warmup, one.Warmup)
		}
		if flat.Stream == nil || one.Stream == nil || flat.Stream.TTFTResponse != one.Stream.TTFTResponse ||
			flat.Stream.ITL != one.Stream.ITL || flat.Stream.TPOT != one.Stream.TPOT ||
			flat.Stream.OutputTokens != one.Stream.OutputTokens || flat.Stream.Goodput.Met != one.Stream.Goodput.Met ||
			flat.Stream.PromptTokens == nil || *flat.Stream.PromptTokens != *one.Stream.PromptTokens ||
			flat.Stream.Asked == nil || *flat.Stream.Asked != *one.Stream.Asked {
			t.Fatalf("seed %d: stream %+v, one generator %+v", seed, flat.Stream, one.Stream)
		}
		if flat.Histograms != one.Histograms || flat.Response != one.Response || flat.SendDelay != one.SendDelay {
			t.Fatalf("seed %d: histograms differ from one generator's", seed)
		}
		if !maps.Equal(flat.GRPC, one.GRPC) || len(one.GRPC) == 0 && len(recs) > 100 {
			t.Fatalf("seed %d: grpc %v, one generator %v", seed, flat.GRPC, one.GRPC)
		}
		if !maps.Equal(flat.Status, one.Status) || !maps.Equal(flat.ErrorKinds, one.ErrorKinds) {
			t.Fatalf("seed %d: statuses %v %v, one generator %v %v", seed, flat.Status, flat.ErrorKinds, one.Status, one.ErrorKinds)
		}
		for i := range max(len(flat.Timeline), len(one.Timeline)) {
			var a, b result.Second
			if i < len(flat.Timeline) {
				a = flat.Timeline[i]
			}
			if i < len(one.Timeline) {
				b = one.Timeline[i]
			}
			b.ResponseP99 = 0 // not mergeable, dropped
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d: second %d: %+v, one generator %+v", seed, i, a, b)
			}
		}
		// Every request, warm-up included, is in one second's class
		// counts, so the comparison above compared them.
		var perSec int64
		for _, s := range one.Timeline {
			for _, n := range s.Classes["X-Class"] {
				perSec += n
			}
		}
		if perSec != int64(len(recs)) {
			t.Fatalf("seed %d: per-second class counts sum to %d, %d requests", seed, perSec, len(recs))
		}
		if len(flat.Classes) != len(one.Classes) {
			t.Fatalf("seed %d: %d class tables, one generator %d", seed, len(flat.Classes), len(one.Classes))
		}
		for i, ct := range flat.Classes {
			if !equalClassValues(ct.Values, one.Classes[i].Values) {
				t.Fatalf("seed %d: class table %s: %+v\none generator: %+v", seed, ct.Header, ct.Values, one.Classes[i].Values)
			}
		}
		st := map[string]string{}
		for _, m := range one.ServerTiming {
			st[m.Name] = m.Histogram
		}
		for _, m := range flat.ServerTiming {
			if st[m.Name] != m.Histogram {
				t.Fatalf("seed %d: Server-Timing %s differs", seed, m.Name)
			}
		}
		if flat.DwellBound == nil || one.DwellBound == nil || *flat.DwellBound != *one.DwellBound {
			t.Fatalf("seed %d: dwell bound %+v, one generator %+v", seed, flat.DwellBound, one.DwellBound)
		}
		if flat.Stamps == nil || !reflect.DeepEqual(flat.Stamps, one.Stamps) {
			t.Fatalf("seed %d: stamps %+v, one generator %+v", seed, flat.Stamps, one.Stamps)
		}
		if !reflect.DeepEqual(flat.Targets, one.Targets) || len(flat.Targets) != len(mixTargets) {
			t.Fatalf("seed %d: targets %+v\none generator: %+v", seed, flat.Targets, one.Targets)
		}
		var inParts int64
		for _, p := range flat.Targets {
			inParts += p.Counts.Scheduled
		}
		if inParts != flat.Headline().Scheduled {
			t.Fatalf("seed %d: the targets hold %d requests, the headline %d", seed, inParts, flat.Headline().Scheduled)
		}
		if len(flat.ServerTiming) != len(one.ServerTiming) {
			t.Fatalf("seed %d: %d Server-Timing metrics, one generator %d", seed, len(flat.ServerTiming), len(one.ServerTiming))
		}
	}
}

func equalClassValues(a, b []result.ClassValue) bool {
	key := func(v result.ClassValue) string { return v.Value }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, func(p, q result.ClassValue) int { return strings.Compare(key(p), key(q)) })
	slices.SortFunc(b, func(p, q result.ClassValue) int { return strings.Compare(key(p), key(q)) })
	return slices.Equal(a, b)
}

// TestMergeRefuses: a result that is not a shard's, a shard of another
// run and a shard given twice are refused, naming the input.
func TestMergeRefuses(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(3, 1)))
	a, b := shardResult(t, recs, 0, 2), shardResult(t, recs, 1, 2)
	other := shardResult(t, recs, 1, 2)
	other.Config.Rate = 200
	seed := shardResult(t, recs, 1, 2)
	seed.Config.Seed = 8
	late := shardResult(t, recs, 1, 2)
	late.Config.StartAt = "2026-12-01T15:00:05Z"
	otherMix := shardResult(t, recs, 1, 2)
	otherMix.Targets[0], otherMix.Targets[1] = otherMix.Targets[1], otherMix.Targets[0]
	noMix := shardResult(t, recs, 1, 2)
	noMix.Targets = nil
	for _, c := range []struct {
		in   []result.MergeInput
		want string
	}{
		{[]result.MergeInput{{"a.json", a}, {"one.json", shardResult(t, recs, 0, 0)}}, "one.json: not a shard's result"},
		{[]result.MergeInput{{"a.json", a}, {"b.json", other}}, "b.json: rate 200, but a.json has 100"},
		{[]result.MergeInput{{"a.json", a}, {"b.json", seed}}, "b.json: seed 8, but a.json has 7"},
		{[]result.MergeInput{{"a.json", a}, {"b.json", late}}, "b.json: StartAt 2026-12-01T15:00:05Z, but a.json has none"},
		{[]result.MergeInput{{"a.json", a}, {"b.json", b}, {"b2.json", b}}, "b2.json: shard 1/2 again (b.json has it too)"},
		{[]result.MergeInput{{"a.json", a}, {"b.json", otherMix}}, `b.json: targets ["checkout" "GET http://t/a" "POST http://t:8080/b, c"], but a.json has ["GET http://t/a" "checkout" "POST http://t:8080/b, c"]`},
		{[]result.MergeInput{{"a.json", a}, {"b.json", noMix}}, `b.json: targets [], but a.json has ["GET http://t/a"`},
	} {
		_, err := result.Merge(c.in...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("merge: %v, want one line containing %q", err, c.want)
		}
	}
}
