package recorder

// TLSCause says why a request with error kind KindTLS failed. The kind stays
// "tls" everywhere (the log, ErrorKinds, --retry-on); the cause is counted
// beside it (Result.TLSCauses) so that a report can name the problem and
// its remedy instead of "TLS failed".
type TLSCause uint8

// TLS causes. TLSNone is the cause of every record whose kind is not
// KindTLS.
const (
	TLSNone             TLSCause = iota
	TLSSelfSigned                // the certificate signed itself and is not trusted
	TLSUnknownAuthority          // the certificate's issuer is not trusted
	TLSExpired                   // the certificate has expired or is not yet valid
	TLSHostname                  // the certificate does not name the URL's host
	TLSCertificate               // the certificate was rejected for another reason
	TLSHandshake                 // the handshake failed: an alert, no common version or cipher, …
	TLSNotTLS                    // the server did not answer in TLS (plain HTTP on an https URL)
	numTLSCauses
)

var tlsCauseNames = [...]string{"", "self_signed", "unknown_authority", "expired", "hostname", "certificate", "handshake", "not_tls"}

// String is the cause's name as a result's tls_causes keys it.
func (c TLSCause) String() string {
	if int(c) < len(tlsCauseNames) {
		return tlsCauseNames[c]
	}
	return "unknown"
}

// addTLSCause counts rec's TLS cause; addFaults calls it.
func (t *faultTally) addTLSCause(rec *Record) {
	if rec.Kind == KindTLS && rec.TLSCause != TLSNone && rec.TLSCause < numTLSCauses {
		t.tls[rec.TLSCause]++
	}
}

// TLSCauses returns the count per TLS cause seen (TLSNone excluded), keyed
// by the causes' names; nil when there was none.
func (r *Recorder) TLSCauses() map[string]int64 {
	var m map[string]int64
	for c := TLSNone + 1; c < numTLSCauses; c++ {
		if n := r.faults.tls[c]; n > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[c.String()] = n
		}
	}
	return m
}
