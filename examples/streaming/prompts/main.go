// Command prompts writes the example's prompt set, prompts.jsonl: one
// OpenAI chat completion request per line, with prompts of varied lengths
// drawn from a fixed seed, so the set is the same on every machine and
// needs no download. Run it with go generate ./examples/streaming/ (or go
// run ./examples/streaming/prompts > examples/streaming/prompts.jsonl).
//
// Prompt lengths follow a log-uniform draw between 8 and 512 words, as
// chat traffic holds many short prompts and a few long ones; each request
// asks for 16 to 128 output tokens and for the usage chunk, so openload
// counts output tokens from the server's own count.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
)

var words = strings.Fields(`the a model server streams tokens to users who wait for the first one
and then read the rest as it arrives while the scheduler batches requests together
so that the accelerator stays busy under an open arrival process`)

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	Model         string         `json:"model"`
	Messages      []message      `json:"messages"`
	MaxTokens     int            `json:"max_tokens"`
	Stream        bool           `json:"stream"`
	StreamOptions map[string]any `json:"stream_options"`
}

func main() {
	n := flag.Int("n", 100, "number of prompts")
	seed := flag.Uint64("seed", 22, "seed of the draw")
	flag.Parse()
	if *n <= 0 {
		fmt.Fprintln(os.Stderr, "prompts: -n must be > 0")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	err := write(w, *n, *seed)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "prompts:", err)
		os.Exit(1)
	}
}

// write writes n requests drawn with seed to w, one JSON line each.
func write(w io.Writer, n int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 0))
	enc := json.NewEncoder(w)
	for i := range n {
		nw := int(math.Round(math.Exp(math.Log(8) + rng.Float64()*(math.Log(512)-math.Log(8)))))
		var b strings.Builder
		fmt.Fprintf(&b, "Prompt %d:", i)
		for range nw {
			b.WriteByte(' ')
			b.WriteString(words[rng.IntN(len(words))])
		}
		req := request{
			Model:         "stub",
			Messages:      []message{{Role: "user", Content: b.String()}},
			MaxTokens:     16 + rng.IntN(113),
			Stream:        true,
			StreamOptions: map[string]any{"include_usage": true},
		}
		if err := enc.Encode(req); err != nil {
			return err
		}
	}
	return nil
}
