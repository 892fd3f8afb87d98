// Package shop is a loopback shop that judges a session run from the
// outside, as nginx's log judges a run of single requests: a login
// (POST /login, {"user": U}) answers a token of its own and sets a
// session cookie; /browse?user=U and /checkout?user=U refuse (401) a
// token that is not the one given to U, and checkout a cookie that is
// not U's. It logs, per user, when each request was read and when its
// answer was written, so a test can tell that every session walked its
// steps in order, carried its own token, and paused its think time.
package shop

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Shop is the handler. Its zero value is not ready: use New.
type Shop struct {
	// Stall, if set, is called before each request is answered (a test's
	// stall).
	Stall func()

	mu      sync.Mutex
	tokens  map[string]string // token → user
	users   map[string][]Step
	counts  map[string]int
	refused int
}

// Step is one request as the shop saw it.
type Step struct {
	Path  string
	Read  time.Time // when the handler began
	Wrote time.Time // when its answer was written
	OK    bool      // not refused
}

// New returns an empty shop.
func New() *Shop {
	return &Shop{tokens: map[string]string{}, users: map[string][]Step{}, counts: map[string]int{}}
}

func (s *Shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	read := time.Now()
	if s.Stall != nil {
		s.Stall()
	}
	var user string
	ok := true
	switch r.URL.Path {
	case "/login":
		var b struct{ User string }
		if json.NewDecoder(r.Body).Decode(&b) != nil || b.User == "" {
			http.Error(w, "bad login", http.StatusBadRequest)
			return
		}
		user = b.User
		tok := fmt.Sprintf("t-%s-%d", user, read.UnixNano())
		s.mu.Lock()
		s.tokens[tok] = user
		s.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s-" + user})
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"token": %q, "user": {"name": %q}}`, tok, user)
	case "/browse", "/checkout":
		user = r.URL.Query().Get("user")
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		ok = s.tokens[tok] == user
		s.mu.Unlock()
		if r.URL.Path == "/checkout" {
			c, err := r.Cookie("sid")
			ok = ok && err == nil && c.Value == "s-"+user
		}
		if !ok {
			http.Error(w, "wrong token", http.StatusUnauthorized)
		} else {
			fmt.Fprint(w, "ok")
		}
	default:
		http.NotFound(w, r)
		return
	}
	wrote := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[r.URL.Path]++
	if !ok {
		s.refused++
	}
	s.users[user] = append(s.users[user], Step{r.URL.Path, read, wrote, ok})
}

// Log is what the shop saw: requests by path, those refused, and each
// user's steps in the order read.
type Log struct {
	Counts  map[string]int
	Refused int
	Users   map[string][]Step
}

// Log returns a copy of what the shop saw so far.
func (s *Shop) Log() Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := Log{Counts: maps.Clone(s.counts), Refused: s.refused, Users: map[string][]Step{}}
	for k, v := range s.users {
		l.Users[k] = slices.Clone(v)
	}
	return l
}

// Walked checks that every user walked paths in order, each request
// accepted, and read each step at least think after the answer before
// it was written; it returns the first user that did not, and the
// shortest gap it saw between an answer and the next request.
func (l Log) Walked(paths []string, think time.Duration) (bad string, minGap time.Duration) {
	minGap = -1
	for _, user := range slices.Sorted(maps.Keys(l.Users)) {
		steps := l.Users[user]
		if len(steps) != len(paths) {
			return fmt.Sprintf("%s: %d steps, want %d", user, len(steps), len(paths)), minGap
		}
		for k, st := range steps {
			if st.Path != paths[k] || !st.OK {
				return fmt.Sprintf("%s: step %d %s (accepted %v), want %s", user, k+1, st.Path, st.OK, paths[k]), minGap
			}
			if k == 0 {
				continue
			}
			gap := st.Read.Sub(steps[k-1].Wrote)
			if minGap < 0 || gap < minGap {
				minGap = gap
			}
			if gap < think {
				return fmt.Sprintf("%s: step %d read %v after the answer before it, under the think time %v", user, k+1, gap, think), minGap
			}
		}
	}
	return "", minGap
}
