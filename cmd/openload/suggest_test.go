package main

import (
	"net"
	"strings"
	"testing"
)

// TestUnknownCommand: a first word that reads as a mistyped command is
// one; a URL, a host:port, a file name, a file that exists and localhost
// are left to the load run, which reads them as a URL.
func TestUnknownCommand(t *testing.T) {
	for word, want := range map[string]bool{
		"frobnicate":            true,
		"repport":               true,
		"Sweeep":                true,
		"my-service_2":          true,
		"http://127.0.0.1:1/":   false,
		"127.0.0.1:8080/x":      false,
		"myhost:8080":           false,
		"localhost":             false,
		"run.json":              false,
		"testdata":              false, // a directory here
		"-rate":                 false,
		"report":                false,
		"":                      false,
		"example.com/predict":   false,
		"[::1]:8080":            false,
		"docs/stall-open.json":  false,
		"https://example.com/x": false,
	} {
		if _, got := unknownCommand(word); got != want {
			t.Errorf("unknownCommand(%q) = %v, want %v", word, got, want)
		}
	}
}

// TestNearest: one slip (a letter dropped, added, changed, or two
// swapped) finds the command or flag; a word further off finds none.
func TestNearest(t *testing.T) {
	flags := []string{"rate", "duration", "connections", "output", "rates"}
	for _, tc := range []struct {
		word  string
		cands []string
		want  string
	}{
		{"repport", commandNames, "report"},
		{"reprot", commandNames, "report"},
		{"sweeep", commandNames, "sweep"},
		{"dif", commandNames, "diff"},
		{"mdoel", commandNames, "model"},
		{"frobnicate", commandNames, ""},
		{"st", commandNames, ""},
		{"rat", flags, "rate"},
		{"rates", flags[:4], "rate"},
		{"conections", flags, "connections"},
		{"durtaion", flags, "duration"},
		{"xyz", flags, ""},
	} {
		if got := nearest(tc.word, tc.cands); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"ab", "ba", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

// TestStubErrorOnePrefix: a stub that cannot listen says so once, as
// "openload: stub: --listen ADDR: …", not "stub: stub:".
func TestStubErrorOnePrefix(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	code, _, stderr := runCLI("stub", "--listen", addr)
	if want := "openload: stub: --listen " + addr + ": "; code != exitRuntime || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit %d and one line starting %q", code, stderr, exitRuntime, want)
	}
}
