package prompt

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello", 1},
		{"hello world", 2},
		{"tiktoken is great!", 6}, // OpenAI cookbook, "How to count tokens with tiktoken": [83 1609 5963 374 2294 0]
	} {
		if got := Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// TestCountConcurrent counts from many goroutines at once, including the
// first use, which builds the codec; the race detector checks the rest.
func TestCountConcurrent(t *testing.T) {
	texts := make([]string, 16)
	for i := range texts {
		texts[i] = strings.Repeat(" cat", 50+i)
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(texts)*8)
	for g := range 8 {
		wg.Go(func() {
			for i, s := range texts {
				if got := Count(s); got != 50+i {
					errs <- fmt.Sprintf("goroutine %d: Count(text %d) = %d, want %d", g, i, got, 50+i)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func BenchmarkCount1024(b *testing.B) {
	text := strings.Repeat(" word", 1024)
	Count(text)
	b.ReportAllocs()
	for b.Loop() {
		Count(text)
	}
}

func TestTokens(t *testing.T) {
	// OpenAI cookbook, "How to count tokens with tiktoken".
	want := []int{83, 1609, 5963, 374, 2294, 0}
	got := Tokens("tiktoken is great!")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Tokens = %v, want %v", got, want)
	}
	if len(Tokens("")) != 0 {
		t.Errorf("Tokens(\"\") = %v", Tokens(""))
	}
}
