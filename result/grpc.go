package result

import "strings"

// gRPC status codes (https://github.com/grpc/grpc/blob/master/doc/statuscodes.md):
// the one table of their names. A result counts a gRPC run's answers by
// these names in lower case (Result.GRPC), the objectives name them so
// (grpc.unavailable), and the report prints them as the spec writes them.
var grpcCodeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// GRPCCodes is the number of gRPC status codes, 0 … GRPCCodes−1.
const GRPCCodes = len(grpcCodeNames)

// GRPCOther is the key of Result.GRPC for a grpc-status outside the
// table (a number the spec does not define, or not a number).
const GRPCOther = "other"

// GRPCCodeName is code's name as the spec writes it (UNAVAILABLE), or
// "" for a code outside the table.
func GRPCCodeName(code int) string {
	if code >= 0 && code < GRPCCodes {
		return grpcCodeNames[code]
	}
	return ""
}

// grpcKeys are the names in lower case, made once: GRPCKey allocates
// nothing (the per-request log writes it for every call).
var grpcKeys = func() (keys [GRPCCodes]string) {
	for c, n := range grpcCodeNames {
		keys[c] = strings.ToLower(n)
	}
	return keys
}()

// GRPCKey is code's key in Result.GRPC: its name in lower case
// (unavailable), or GRPCOther.
func GRPCKey(code int) string {
	if code >= 0 && code < GRPCCodes {
		return grpcKeys[code]
	}
	return GRPCOther
}

// GRPCCode is the code of key (a name in either case), and whether it
// names one.
func GRPCCode(key string) (int, bool) {
	for c, n := range grpcCodeNames {
		if strings.EqualFold(n, key) {
			return c, true
		}
	}
	return 0, false
}

// GRPCClass says what an answer of code means for the run, as an HTTP
// status's class does: GRPCRefusal for the codes that refuse the
// request as a 4xx does (the call is wrong, not the server: a run of
// only those fails the target, as a run of only 4xx does), GRPCServer
// for the server's failures as a 5xx, GRPCAnswer for OK and for the
// answers a client is meant to take (RESOURCE_EXHAUSTED is the server's
// 429, CANCELLED, ALREADY_EXISTS …).
func GRPCClass(code int) int {
	switch code {
	case 3, 5, 7, 12, 16: // INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, UNIMPLEMENTED, UNAUTHENTICATED
		return GRPCRefusal
	case 2, 4, 13, 14, 15: // UNKNOWN, DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE, DATA_LOSS
		return GRPCServer
	}
	return GRPCAnswer
}

// The classes of GRPCClass.
const (
	GRPCAnswer = iota
	GRPCRefusal
	GRPCServer
)
