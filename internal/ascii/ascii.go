// Package ascii holds the byte-level text helpers that the wire parsers
// share (HTTP/1.1 heads, internal/h1; event streams, internal/framing):
// generic over string and []byte, so that a parser compares the bytes it
// read without converting them, which would allocate on the hot path.
package ascii

// EqualFold reports whether b equals the lower-case ASCII s, ignoring
// case.
func EqualFold[T ~string | ~[]byte](b T, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
