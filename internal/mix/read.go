// Package mix reads a request mix: vegeta's targets files (its HTTP and
// JSON formats, read as vegeta reads them), openload's names and weights
// on top, and per-request values (templates, a CSV values file), and
// builds the engine's targets from them (Build). It prints nothing and
// exits nothing: every problem is an error of one line naming its file
// and line.
//
// The grammar follows vegeta's lib/targets.go as of commit cf58112
// (github.com/tsenart/vegeta, 2026-02-16): NewHTTPTargeter for the HTTP
// format, NewJSONTargeter and jsonTarget.decode (lib/targets_easyjson.go)
// for JSON lines. Where vegeta loses or garbles a target, openload
// errors instead; each such place says so.
package mix

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// Format is a targets file's format.
type Format int

const (
	// Auto takes JSON when the file's first line that is not blank
	// starts with '{', else HTTP. Neither format can be mistaken for the
	// other: an HTTP target starts with an upper-case method and vegeta's
	// JSON reader has no comments.
	Auto Format = iota
	HTTP        // vegeta -format=http (its default)
	JSON        // vegeta -format=json
)

// Target is one target as the file gives it, before templates.
type Target struct {
	// Name is the file's name for the target, else "METHOD URL" (with
	// " #2", " #3", … on repeats of an unnamed target: a vegeta file may
	// repeat a target to send it more often, and names must be unique).
	Name   string
	Method string
	URL    string      // as written
	Header http.Header // names as written: vegeta keeps their case
	Body   []byte
	// BodyFile is the @path the body was read from ("" when inline or
	// none); Build names it in errors about the body.
	BodyFile string
	Weight   float64 // 0: none given
	File     string  // where the target is, for errors
	Line     int     // its METHOD line, or its JSON line
}

// where names the target in an error: "FILE:LINE: NAME".
func (t *Target) where() string {
	return fmt.Sprintf("%s:%d: %s", t.File, t.Line, t.Name)
}

// Options says how to read a targets file.
type Options struct {
	Format Format
	// ReadFile reads an @path body file; nil is os.ReadFile. As vegeta
	// does (os.ReadFile(line[1:]) in NewHTTPTargeter), a relative path is
	// relative to the working directory, not to the targets file.
	ReadFile func(path string) ([]byte, error)
}

// Error is a targets or values file's error at a line.
type Error struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// ReadTargetsFile reads the targets file at path.
func ReadTargetsFile(path string, opt Options) ([]Target, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTargets(f, path, opt)
}

// ReadTargets reads a targets file; file names it in errors. A file with
// no target is an error, as in vegeta (ErrNoTargets).
func ReadTargets(r io.Reader, file string, opt Options) ([]Target, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	// A UTF-8 byte order mark, as some editors write: vegeta would take
	// it for part of the method.
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if opt.ReadFile == nil {
		opt.ReadFile = os.ReadFile
	}
	lines := splitLines(data)
	format := opt.Format
	if format == Auto {
		format = HTTP
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" {
				if l[0] == '{' {
					format = JSON
				}
				break
			}
		}
	}
	var ts []Target
	switch format {
	case HTTP:
		ts, err = readHTTP(lines, 0, file, opt)
	case JSON:
		ts, err = readJSON(lines, 0, file)
	default:
		return nil, &Error{File: file, Msg: fmt.Sprintf("unknown format %d", format)}
	}
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		if len(data) == 0 {
			return nil, &Error{File: file, Msg: "empty: no targets"}
		}
		return nil, &Error{File: file, Msg: "no targets"}
	}
	if err := nameTargets(ts); err != nil {
		return nil, err
	}
	return ts, nil
}

// splitLines splits at '\n'; bufio.ScanLines' dropped '\r' goes with
// the TrimSpace every line gets, as in vegeta.
func splitLines(data []byte) []string {
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// isMethodLine is vegeta's startsWithHTTPMethod: an upper-case ASCII
// word followed by white space (`^[A-Z]+\s`).
func isMethodLine(l string) bool {
	i := 0
	for i < len(l) && 'A' <= l[i] && l[i] <= 'Z' {
		i++
	}
	return i > 0 && i < len(l) && strings.ContainsRune(" \t\n\v\f\r", rune(l[i]))
}

// directive is openload's comment before a target's METHOD line, e.g.
// "# openload: name=checkout weight=2"; vegeta skips it as a comment.
const directive = "openload:"

// readHTTP reads vegeta's HTTP format (NewHTTPTargeter): blank and '#'
// lines are skipped between targets; a target is a "METHOD URL" line,
// then, unless the next line is blank or another METHOD line, "Name:
// value" header lines ('#' lines among them skipped) up to a blank line
// or an "@path" body line, which ends the target. Every line is trimmed
// of white space first. lines[0] is the file's line first+1 (a lazy
// read, stream.go, gives the lines of a few targets at a time).
func readHTTP(lines []string, first int, file string, opt Options) ([]Target, error) {
	var ts []Target
	errAt := func(i int, format string, a ...any) error {
		return &Error{File: file, Line: first + i + 1, Msg: fmt.Sprintf(format, a...)}
	}
	var name string
	var weight float64
	dirLine := -1
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" {
			continue
		}
		if line[0] == '#' {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line[1:]), directive); ok {
				if dirLine >= 0 {
					return nil, errAt(i, "a second openload directive for one target (the first is on line %d)", dirLine+1)
				}
				var err error
				if name, weight, err = parseDirective(rest); err != nil {
					return nil, errAt(i, "%v", err)
				}
				dirLine = i
			}
			continue
		}
		t := Target{File: file, Line: first + i + 1, Header: http.Header{}, Name: name, Weight: weight}
		name, weight, dirLine = "", 0, -1
		// vegeta: strings.SplitN(line, " ", 2), then the method check.
		method, u, ok := strings.Cut(line, " ")
		if !ok {
			return nil, errAt(i, "bad target %q: want METHOD URL", line)
		}
		if !isMethodLine(line) || strings.TrimLeft(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return nil, errAt(i, "bad method %q: want upper-case letters", method)
		}
		if err := checkURL(u); err != nil {
			return nil, errAt(i, "bad URL %q: %v", u, err)
		}
		t.Method, t.URL = method, u
		// vegeta peeks at the next line only: blank or a METHOD line ends
		// the target at once.
		if i+1 < len(lines) {
			if next := strings.TrimSpace(lines[i+1]); next == "" || isMethodLine(next) {
				ts = append(ts, t)
				continue
			}
		}
		for i+1 < len(lines) {
			i++
			line = strings.TrimSpace(lines[i])
			if line == "" {
				break
			}
			if line[0] == '#' {
				if strings.HasPrefix(strings.TrimSpace(line[1:]), directive) {
					return nil, errAt(i, "an openload directive goes before its target's METHOD line")
				}
				continue
			}
			if path, ok := strings.CutPrefix(line, "@"); ok {
				if path == "" {
					return nil, errAt(i, "%s %s: @ without a body file path", t.Method, t.URL)
				}
				body, err := opt.ReadFile(path)
				if err != nil {
					// vegeta fails the whole read too ("bad body: …").
					return nil, errAt(i, "%s %s: body file %q: %v", t.Method, t.URL, path, oneLine(err.Error()))
				}
				t.Body, t.BodyFile = body, path
				break
			}
			k, v, ok := strings.Cut(line, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return nil, errAt(i, "bad header %q: want Name: value", line)
			}
			// vegeta takes any text before ':' as a name, so a METHOD
			// line with no blank line before it becomes a header named
			// "GET http" that every request then fails on; a name that
			// is not an HTTP token is an error here.
			if !httpguts.ValidHeaderFieldName(k) {
				return nil, errAt(i, "bad header name %q (a new target needs a blank line before it)", k)
			}
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, errAt(i, "bad header %q: control character in the value", k)
			}
			// As written, not canonical: vegeta keeps the case, as some
			// servers under test care.
			t.Header[k] = append(t.Header[k], v)
		}
		ts = append(ts, t)
	}
	if dirLine >= 0 {
		return nil, errAt(dirLine, "openload directive with no target after it")
	}
	return ts, nil
}

// parseDirective reads "name=N weight=W" (either, in any order; a name
// with spaces is quoted, as a Go string).
func parseDirective(s string) (name string, weight float64, err error) {
	seen := map[string]bool{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return "", 0, fmt.Errorf("bad openload directive at %q: want key=value", s)
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return "", 0, fmt.Errorf("bad openload directive: %s: unterminated or bad quoted value", k)
			}
			v, _ = strconv.Unquote(q)
			s = rest[len(q):]
			if s != "" && s[0] != ' ' && s[0] != '\t' {
				return "", 0, fmt.Errorf("bad openload directive: %s: text after the quoted value", k)
			}
		} else {
			v, s, _ = strings.Cut(rest, " ")
		}
		if seen[k] {
			return "", 0, fmt.Errorf("openload directive: %s given twice", k)
		}
		seen[k] = true
		switch k {
		case "name":
			if err := checkName(v); err != nil {
				return "", 0, err
			}
			name = v
		case "weight":
			if weight, err = parseWeight(v); err != nil {
				return "", 0, err
			}
		default:
			return "", 0, fmt.Errorf("openload directive: unknown key %q (want name, weight)", k)
		}
	}
	if len(seen) == 0 {
		return "", 0, fmt.Errorf("empty openload directive (want name=… and/or weight=…)")
	}
	return name, weight, nil
}

func parseWeight(v string) (float64, error) {
	w, err := strconv.ParseFloat(v, 64)
	if err != nil || !(w > 0) || math.IsInf(w, 0) {
		return 0, fmt.Errorf("bad weight %q: want a finite number > 0", v)
	}
	return w, nil
}

// checkURL checks what vegeta checks (url.ParseRequestURI) and what
// openload needs besides: an http or https scheme (vegeta would only
// fail at the first request), a host, and no template in the scheme,
// user or host, as a run has one origin.
func checkURL(raw string) error {
	if !utf8.ValidString(raw) {
		return fmt.Errorf("not UTF-8")
	}
	if strings.Contains(origin(raw), "{{") {
		return fmt.Errorf("a template in the scheme or host (they must be literal: one origin per run)")
	}
	u, err := url.ParseRequestURI(raw)
	if err != nil {
		return urlErr(err)
	}
	if u.Scheme == "" {
		return fmt.Errorf("no scheme: want http:// or https://")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q: want http or https", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("no host")
	}
	return nil
}

// urlErr drops url.Error's repetition of the URL, which the caller names.
func urlErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// CheckPort is the error for a URL whose port no connection can reach:
// url.Parse takes any digits, so "http://h:99999/" would otherwise run,
// every request failing.
func CheckPort(u *url.URL) error {
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %s is not in 1..65535", p)
		}
	}
	return nil
}

// origin is raw's "scheme://userinfo@host:port" part: up to the first
// '/', '?' or '#' after "//" (all of raw when it has no "//").
func origin(raw string) string {
	_, rest, ok := strings.Cut(raw, "//")
	if !ok {
		return raw
	}
	end := len(raw) - len(rest)
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		return raw[:end+j]
	}
	return raw
}

// oneLine keeps an error from the outside on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// readJSON reads vegeta's JSON lines (NewJSONTargeter): one object per
// line, blank lines skipped, "method" and "url" required, "body" base64
// (encoding/base64's StdEncoding, as easyjson's Lexer.Bytes), "header"
// an object of arrays of strings. Keys are matched exactly (easyjson's
// generated switch; encoding/json's struct decoding would match
// "METHOD" too), a null value is as if absent, a repeated key's last
// value wins, and unknown keys are skipped (the default case of
// jsonTarget.decode calls SkipRecursive, though lib/target.schema.json
// says additionalProperties: false), which is what lets "name" and
// "weight" through vegeta. vegeta drops a last line that has no '\n'
// (ReadBytes returns io.EOF with it); it is read here. lines[0] is the
// file's line first+1.
func readJSON(lines []string, first int, file string) ([]Target, error) {
	var ts []Target
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		errAt := func(format string, a ...any) error {
			return &Error{File: file, Line: first + i + 1, Msg: fmt.Sprintf(format, a...)}
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, errAt("bad JSON target: %s", oneLine(err.Error()))
		}
		t := Target{File: file, Line: first + i + 1, Header: http.Header{}}
		field := func(key string, v any) (bool, error) {
			raw, ok := m[key]
			if !ok || string(raw) == "null" {
				return false, nil
			}
			if err := json.Unmarshal(raw, v); err != nil {
				return false, errAt("bad %q: %s", key, oneLine(err.Error()))
			}
			return true, nil
		}
		if _, err := field("method", &t.Method); err != nil {
			return nil, err
		}
		if _, err := field("url", &t.URL); err != nil {
			return nil, err
		}
		if t.Method == "" {
			return nil, errAt("target has no method") // vegeta: ErrNoMethod
		}
		if t.URL == "" {
			return nil, errAt("target has no url") // vegeta: ErrNoURL
		}
		// vegeta takes any method string here; an invalid one fails
		// every request there, and is an error here.
		if !validMethod(t.Method) {
			return nil, errAt("bad method %q", t.Method)
		}
		if err := checkURL(t.URL); err != nil {
			return nil, errAt("bad URL %q: %v", t.URL, err)
		}
		var b64 string
		if ok, err := field("body", &b64); err != nil {
			return nil, err
		} else if ok {
			body, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, errAt("bad \"body\" (want base64): %v", err)
			}
			t.Body = body
		}
		var hdr map[string][]string
		if _, err := field("header", &hdr); err != nil {
			return nil, err
		}
		for k, vs := range hdr {
			if !httpguts.ValidHeaderFieldName(k) {
				return nil, errAt("bad header name %q", k)
			}
			for _, v := range vs {
				if !httpguts.ValidHeaderFieldValue(v) {
					return nil, errAt("bad header %q: control character in the value", k)
				}
			}
			if len(vs) > 0 { // vegeta's null or [] sends nothing
				t.Header[k] = vs
			}
		}
		if ok, err := field("name", &t.Name); err != nil {
			return nil, err
		} else if ok {
			if err := checkName(t.Name); err != nil {
				return nil, errAt("%v", err)
			}
		}
		if ok, err := field("weight", &t.Weight); err != nil {
			return nil, err
		} else if ok && !(t.Weight > 0) {
			return nil, errAt("bad weight %s: want a finite number > 0", m["weight"])
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// checkName keeps names printable on one line, as reports and errors
// show them.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("name %q is not UTF-8", name)
	}
	if strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return fmt.Errorf("name %q has a control character", name)
	}
	return nil
}

// validMethod: an HTTP token (RFC 9110's method = token).
func validMethod(m string) bool {
	return m != "" && strings.IndexFunc(m, func(r rune) bool { return !httpguts.IsTokenRune(r) }) < 0
}

// nameTargets gives unnamed targets "METHOD URL" (numbered on repeats)
// and checks that names are unique.
func nameTargets(ts []Target) error {
	line := map[string]int{}
	for i := range ts {
		if ts[i].Name != "" {
			if l, ok := line[ts[i].Name]; ok {
				return &Error{File: ts[i].File, Line: ts[i].Line, Msg: fmt.Sprintf("name %q is taken by the target on line %d", ts[i].Name, l)}
			}
			line[ts[i].Name] = ts[i].Line
		}
	}
	repeats := map[string]int{}
	for i := range ts {
		if ts[i].Name != "" {
			continue
		}
		name := ts[i].Method + " " + redacted(ts[i].URL)
		repeats[name]++
		if n := repeats[name]; n > 1 {
			name += " #" + strconv.Itoa(n)
		}
		if l, ok := line[name]; ok {
			return &Error{File: ts[i].File, Line: ts[i].Line, Msg: fmt.Sprintf("target's default name %q is taken by the target on line %d", name, l)}
		}
		ts[i].Name = name
		line[name] = ts[i].Line
	}
	return nil
}

// redacted is raw with a password in it replaced by xxxxx, so that a
// target's default name, which reports and results print, holds no
// secret.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); !ok {
		return raw
	}
	return u.Redacted()
}
