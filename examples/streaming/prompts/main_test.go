package main

import (
	"bytes"
	"os"
	"testing"
)

// The committed prompt set is what the generator writes with its
// defaults: go generate ./examples/streaming/ reproduces it.
func TestCommittedSetIsGenerated(t *testing.T) {
	want, err := os.ReadFile("../prompts.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := write(&got, 100, 22); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("prompts.jsonl differs from the generator's output (%d vs %d bytes): run go generate ./examples/streaming/", len(want), got.Len())
	}
}
