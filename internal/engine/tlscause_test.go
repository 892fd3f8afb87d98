package engine

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// testCA is a certificate authority for tests: it signs leaf certificates
// that a client trusts when its RootCAs hold the CA.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "openload test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// leaf signs a server certificate valid from notBefore to notAfter for
// 127.0.0.1, or for dnsName instead when it is not empty.
func (ca *testCA) leaf(t *testing.T, notBefore, notAfter time.Time, dnsName string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "openload test server"},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if dnsName != "" {
		tmpl.DNSNames = []string{dnsName}
	} else {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestTLSCauses runs requests against servers whose TLS fails in each
// usual way, over HTTP/1.1 and HTTP/2 (ALPN): every request is a tls error,
// and each carries the cause the report names.
func TestTLSCauses(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()
	ok := func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }
	tlsServer := func(t *testing.T, conf *tls.Config) string {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(ok))
		srv.EnableHTTP2 = true
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail, as they should
		if conf != nil {
			srv.TLS = conf
		}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv.URL
	}
	withCert := func(c tls.Certificate) *tls.Config { return &tls.Config{Certificates: []tls.Certificate{c}} }
	cases := []struct {
		name   string
		server func(t *testing.T) string
		client *tls.Config
		want   recorder.TLSCause
	}{
		{"self-signed", func(t *testing.T) string { return tlsServer(t, nil) }, nil, recorder.TLSSelfSigned},
		{"unknown authority", func(t *testing.T) string {
			return tlsServer(t, withCert(ca.leaf(t, now.Add(-time.Hour), now.Add(time.Hour), "")))
		}, nil, recorder.TLSUnknownAuthority},
		{"expired", func(t *testing.T) string {
			return tlsServer(t, withCert(ca.leaf(t, now.Add(-2*time.Hour), now.Add(-time.Hour), "")))
		}, &tls.Config{RootCAs: ca.pool()}, recorder.TLSExpired},
		{"not yet valid", func(t *testing.T) string {
			return tlsServer(t, withCert(ca.leaf(t, now.Add(time.Hour), now.Add(2*time.Hour), "")))
		}, &tls.Config{RootCAs: ca.pool()}, recorder.TLSExpired},
		{"wrong host name", func(t *testing.T) string {
			return tlsServer(t, withCert(ca.leaf(t, now.Add(-time.Hour), now.Add(time.Hour), "example.com")))
		}, &tls.Config{RootCAs: ca.pool()}, recorder.TLSHostname},
		{"no common protocol version", func(t *testing.T) string {
			c := withCert(ca.leaf(t, now.Add(-time.Hour), now.Add(time.Hour), ""))
			c.MinVersion = tls.VersionTLS13
			return tlsServer(t, c)
		}, &tls.Config{RootCAs: ca.pool(), MaxVersion: tls.VersionTLS12}, recorder.TLSHandshake},
		{"plain HTTP on an https URL", func(t *testing.T) string {
			srv := httptest.NewServer(http.HandlerFunc(ok))
			t.Cleanup(srv.Close)
			return strings.Replace(srv.URL, "http://", "https://", 1)
		}, nil, recorder.TLSNotTLS},
	}
	for _, tc := range cases {
		for _, proto := range []string{HTTP1, HTTP2} {
			t.Run(tc.name+"/"+proto, func(t *testing.T) {
				rec, _ := runAgainst(t, tc.server(t), Config{Protocol: proto, TLS: tc.client}, schedule.NewConstant(100, 50*time.Millisecond))
				c := checkIdentity(t, rec, 5)
				if c.Errors != 5 || rec.ErrorKinds()["tls"] != 5 {
					t.Errorf("counts %+v, kinds %v: want 5 tls errors", c, rec.ErrorKinds())
				}
				if got := rec.TLSCauses(); got[tc.want.String()] != 5 || len(got) != 1 {
					t.Errorf("tls causes %v, want %s ×5", got, tc.want)
				}
			})
		}
	}
}

// TestTLSCauseOnlyForTLS: a record of any other kind has no TLS cause.
func TestTLSCauseOnlyForTLS(t *testing.T) {
	for k := recorder.KindNone; k <= recorder.KindUnfinished; k++ {
		if k == recorder.KindTLS {
			continue
		}
		if c := tlsCause(k, io.ErrUnexpectedEOF); c != recorder.TLSNone {
			t.Errorf("kind %s: cause %s, want none", k, c)
		}
	}
	if c := tlsCause(recorder.KindTLS, nil); c != recorder.TLSNone {
		t.Errorf("no error: cause %s", c)
	}
}
