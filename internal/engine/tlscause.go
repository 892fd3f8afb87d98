package engine

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"

	"github.com/openload/openload/internal/recorder"
)

// Why a TLS request failed. Kind says "tls"; tlsCause says which of the
// usual reasons it was, from the error net/http's client returns (on
// HTTP/1.1 and on HTTP/2 over TLS alike, the dial's handshake error
// wrapped in *url.Error):
//
//   - *tls.CertificateVerificationError wraps what x509 said about the
//     chain: UnknownAuthorityError (self-signed when the certificate's
//     issuer is its own subject), CertificateInvalidError (Reason Expired
//     covers "not yet valid" too), HostnameError, or another x509 error;
//   - an alert from the server arrives as *net.OpError with Op "remote
//     error" (no common protocol version or cipher suite, a client
//     certificate required, …); crypto/tls's own refusals are plain
//     errors whose text starts with "tls: ";
//   - a server that does not speak TLS makes the first record unreadable
//     (tls.RecordHeaderError), which net/http turns into "server gave
//     HTTP response to HTTPS client" when the bytes look like HTTP.

// tlsCause is the cause of a request that failed with kind (TLSNone unless
// kind is KindTLS).
func tlsCause(kind recorder.ErrorKind, err error) recorder.TLSCause {
	if kind != recorder.KindTLS || err == nil {
		return recorder.TLSNone
	}
	var (
		unkAuth x509.UnknownAuthorityError
		invErr  x509.CertificateInvalidError
		hostErr x509.HostnameError
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unkAuth):
		if c := unkAuth.Cert; c != nil && bytes.Equal(c.RawIssuer, c.RawSubject) {
			return recorder.TLSSelfSigned
		}
		return recorder.TLSUnknownAuthority
	case errors.As(err, &invErr) && invErr.Reason == x509.Expired:
		return recorder.TLSExpired
	case errors.As(err, &hostErr):
		return recorder.TLSHostname
	case errors.As(err, &invErr), errors.As(err, &certErr):
		return recorder.TLSCertificate
	case errors.As(err, &recErr), plainHTTPOverTLS(err):
		return recorder.TLSNotTLS
	}
	return recorder.TLSHandshake
}

// tlsAlert reports whether err is a TLS handshake refused by either side
// without a certificate to blame: an alert the server sent, or crypto/tls's
// own refusal of what the server offered. Kind counts both as tls.
func tlsAlert(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return true
	}
	inner := err
	for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
		inner = u
	}
	return strings.HasPrefix(inner.Error(), "tls: ")
}
