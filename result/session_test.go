package result_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// turns are the steps of the session runs below: a conversation's.
var turns = []string{"turn1", "turn2", "turn3"}

// session is one drawn session: its account and its steps' records.
type session struct {
	acct recorder.SessionRecord
	recs []recorder.Record
}

// randomSessions draws a session run: arrivals over 3 s, each session
// walking up to three streamed turns with a think time between them,
// ending early at a failed turn or cut at the run's end (4 s); the later
// turns read part of their prompt from the server's cache.
func randomSessions(rng *rand.Rand) []session {
	n := 1 + rng.IntN(120)
	out := make([]session, n)
	seq := uint64(0)
	for i := range out {
		arrival := time.Duration(rng.Float64() * float64(3*time.Second))
		s := session{acct: recorder.SessionRecord{Seq: uint64(i), Arrival: arrival, Outcome: recorder.SessionCompleted, EndedAt: -1}}
		due := arrival
		prompt := 0
		for k := range turns {
			r := recorder.Record{Seq: seq, Scheduled: due, Sent: due + time.Duration(rng.IntN(2000))*time.Microsecond, WasSent: true, Target: uint32(k)}
			seq++
			r.FirstToken = r.Sent + time.Duration(5+rng.IntN(200))*time.Millisecond
			r.Events = 1 + rng.IntN(20)
			r.Tokens = r.Events
			r.LastToken = r.FirstToken + time.Duration(r.Events-1)*time.Duration(1+rng.IntN(20))*time.Millisecond
			r.Done = r.LastToken + time.Millisecond
			r.Streamed, r.GotFirstByte, r.FirstByte = true, true, r.FirstToken
			prompt += 50 + rng.IntN(100)
			r.PromptTokens, r.CachedTokens = prompt, prompt/2*min(k, 1)
			r.Outcome, r.Status = recorder.Completed, 200
			switch x := rng.IntN(12); {
			case r.Done > 4*time.Second:
				// Cut at the run's end, before its first token or after.
				r.Done, r.Outcome, r.Kind, r.Status = 4*time.Second, recorder.Unfinished, recorder.KindUnfinished, 0
				if r.FirstToken >= r.Done {
					r.Events, r.Tokens, r.Streamed = 0, 0, false
				} else {
					r.LastToken = min(r.LastToken, r.Done)
				}
				s.acct.Outcome = recorder.SessionUnfinished
			case x == 0:
				r.Outcome, r.Kind, r.Status = recorder.Failed, recorder.KindReset, 0
				s.acct.Outcome, s.acct.EndedAt = recorder.SessionEndedEarly, k
			}
			s.recs = append(s.recs, r)
			s.acct.End = r.Done
			if s.acct.Outcome != recorder.SessionCompleted {
				break
			}
			due = r.Done + time.Duration(rng.IntN(500))*time.Millisecond // think
		}
		s.acct.Steps = len(s.recs)
		out[i] = s
	}
	return out
}

// sessionResult records the sessions into a result; with of > 0, as
// shard index of of, keeping the sessions of index ≡ index (mod of): a
// session is sharded whole.
func sessionResult(t *testing.T, sessions []session, index, of int) *result.Result {
	t.Helper()
	rec := recorder.New(nil)
	rec.StreamRun()
	rec.TrackSessions(turns)
	rec.Begin(start)
	var expected int64
	for i := range sessions {
		if of > 0 && i%of != index {
			continue
		}
		expected++
		for j := range sessions[i].recs {
			r := sessions[i].recs[j]
			if err := rec.Add(&r); err != nil {
				t.Fatal(err)
			}
		}
		rec.AddSession(&sessions[i].acct)
	}
	res := &result.Result{Tool: "openload", Started: start, Sessions: &result.Sessions{Expected: expected},
		Counts: result.Counts{Expected: float64(expected)},
		Config: result.Config{Target: "http://t/", Method: "POST", Arrival: "constant", Rate: 40, Duration: "3s", Seed: 7}}
	if err := rec.Fill(res); err != nil {
		t.Fatal(err)
	}
	if of > 0 {
		res.Config.Shard = &result.ShardConfig{Of: of, Indexes: []int{index}, Whole: "constant 40/s for 3s", WholeExpected: float64(len(sessions)), WholeScheduled: int64(len(sessions))}
		res.Shards = []result.ShardRun{result.OwnShardRun(res)}
	}
	return res
}

// TestMergeSessions: the merge of a session run's shards holds what one
// generator recording every session holds: the sessions' account (ends
// by step, time and its histogram byte for byte, timeline with the
// sessions in progress) and each step's figures, stream figures
// included; merging in any order or grouping gives the same.
func TestMergeSessions(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 52))
		sessions := randomSessions(rng)
		of := 2 + int(seed)
		shards := make([]*result.Result, of)
		for i := range of {
			shards[i] = sessionResult(t, sessions, i, of)
		}
		flat := merge(t, shards...)
		one := sessionResult(t, sessions, 0, 0)
		if !reflect.DeepEqual(flat.Sessions, one.Sessions) {
			t.Fatalf("seed %d: sessions\n%+v\none generator\n%+v", seed, *flat.Sessions, *one.Sessions)
		}
		if !reflect.DeepEqual(flat.Steps, one.Steps) || len(flat.Steps) != len(turns) || flat.Steps[0].Stream == nil {
			t.Fatalf("seed %d: steps\n%+v\none generator\n%+v", seed, flat.Steps, one.Steps)
		}
		if flat.Stream == nil || !reflect.DeepEqual(flat.Stream.CachedTokens, one.Stream.CachedTokens) || flat.Stream.CachedTokens == nil {
			t.Fatalf("seed %d: cached tokens %+v, one generator %+v", seed, flat.Stream.CachedTokens, one.Stream.CachedTokens)
		}
		if flat.Sessions.StepRecords != flat.Counts.Scheduled {
			t.Fatalf("seed %d: %d step records, %d scheduled", seed, flat.Sessions.StepRecords, flat.Counts.Scheduled)
		}
		if of >= 3 {
			left := merge(t, merge(t, shards[0], shards[1]), shards[2])
			right := merge(t, shards[2], merge(t, shards[1], shards[0]))
			if jsonOf(t, left) != jsonOf(t, right) {
				t.Fatalf("seed %d: merges of sessions depend on grouping or order", seed)
			}
		}
	}
}

// TestMergeSessionsShifted: a shard that started a second later has its
// sessions' seconds placed after the first's, and the sessions in
// progress are counted from the sums.
func TestMergeSessionsShifted(t *testing.T) {
	one := func(index int, arrival, end time.Duration) *result.Result {
		rec := recorder.New(nil)
		rec.TrackSessions([]string{"a"})
		rec.AddSession(&recorder.SessionRecord{Arrival: arrival, End: end, Steps: 0, Outcome: recorder.SessionUnfinished, EndedAt: -1})
		res := &result.Result{Started: start.Add(time.Duration(index) * time.Second), Sessions: &result.Sessions{Expected: 1},
			Config: result.Config{Shard: &result.ShardConfig{Of: 2, Indexes: []int{index}}}}
		if err := rec.Fill(res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	m := merge(t, one(0, 0, 2500*time.Millisecond), one(1, 500*time.Millisecond, 1500*time.Millisecond))
	want := []result.SessionSecond{{0, 1, 0, 1}, {1, 1, 0, 2}, {2, 0, 2, 0}}
	if !reflect.DeepEqual(m.Sessions.Timeline, want) || m.Sessions.Started != 2 || m.Sessions.Expected != 2 {
		t.Errorf("timeline %+v, %+v", m.Sessions.Timeline, *m.Sessions)
	}
}

// TestMergeRefusesOtherSteps: shards of session runs of other steps are
// not of one run.
func TestMergeRefusesOtherSteps(t *testing.T) {
	sessions := randomSessions(rand.New(rand.NewPCG(1, 1)))
	a, b := sessionResult(t, sessions, 0, 2), sessionResult(t, sessions, 1, 2)
	b.Steps[0].Name = "login"
	if _, err := result.Merge(result.MergeInput{Name: "a.json", Result: a}, result.MergeInput{Name: "b.json", Result: b}); err == nil ||
		err.Error() != `b.json: steps ["login" "turn2" "turn3"], but a.json has ["turn1" "turn2" "turn3"]: not a shard of the same run` {
		t.Errorf("merge: %v", err)
	}
}

// TestUnionSessions: the whole of scenarios holds the sum of the session
// scenarios' sessions, as one recorder of all of them, and no steps;
// a union of runs of single requests has no sessions.
func TestUnionSessions(t *testing.T) {
	sessions := randomSessions(rand.New(rand.NewPCG(5, 2)))
	half := len(sessions) / 2
	a, b := sessionResult(t, sessions[:half], 0, 0), sessionResult(t, sessions[half:], 0, 0)
	plain := shardResult(t, randomRecords(rand.New(rand.NewPCG(5, 3))), 0, 0)
	u, err := result.Union([]result.Scenario{{Name: "chat", Result: a}, {Name: "browse", Result: plain}, {Name: "chat2", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	one := sessionResult(t, sessions, 0, 0)
	if !reflect.DeepEqual(u.Sessions, one.Sessions) {
		t.Errorf("sessions\n%+v\none recorder\n%+v", *u.Sessions, *one.Sessions)
	}
	if u.Steps != nil || u.Targets != nil || u.Scenarios[0].Result.Steps == nil {
		t.Errorf("the whole has steps %v, targets %v", u.Steps, u.Targets)
	}
	u, err = result.Union([]result.Scenario{{Name: "a", Result: plain}, {Name: "b", Result: shardResult(t, nil, 0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if u.Sessions != nil {
		t.Errorf("a union without sessions has %+v", *u.Sessions)
	}
}

// TestSessionResultRoundTrip: a session run's result reads back as
// written: its sessions, its steps with their stream figures and the
// run's cached tokens.
func TestSessionResultRoundTrip(t *testing.T) {
	res := sessionResult(t, randomSessions(rand.New(rand.NewPCG(9, 9))), 0, 0)
	var b bytes.Buffer
	if err := result.Write(&b, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(&b, "s.json")
	if err != nil {
		t.Fatal(err)
	}
	if back.Sessions == nil || back.Steps[1].Stream == nil || back.Stream.CachedTokens == nil ||
		!reflect.DeepEqual(back.Sessions, res.Sessions) || !reflect.DeepEqual(back.Steps, res.Steps) || !reflect.DeepEqual(back.Stream, res.Stream) {
		t.Errorf("read back\n%+v\n%+v\nwritten\n%+v\n%+v", back.Sessions, back.Steps, res.Sessions, res.Steps)
	}
}
