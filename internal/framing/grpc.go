package framing

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// gRPC's length-prefixed messages (gRPC over HTTP/2, "Length-Prefixed-
// Message"): each message on a stream, either way, is one byte of flags
// (bit 0: compressed with the stream's grpc-encoding), four bytes of
// length, big-endian, then that many bytes of protobuf. openload sends its
// messages uncompressed (it sends no grpc-accept-encoding, so a server has
// no codec to answer with either). Writer and reader live here, beside the
// other streamed framings, so that the message builder (internal/grpcmsg)
// and the clients that read answers cut them one way.

// GRPCPrefix is the length of a gRPC message's prefix.
const GRPCPrefix = 5

// ErrGRPCCompressed is a message whose compressed flag is set: openload
// asks for none, so it cannot read it.
var ErrGRPCCompressed = errors.New("grpc: a compressed message (openload asks for no grpc-encoding)")

// AppendGRPC appends msg to dst as one uncompressed gRPC message: its
// prefix, then msg.
func AppendGRPC(dst, msg []byte) []byte {
	dst = append(dst, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], uint32(len(msg)))
	return append(dst, msg...)
}

// CutGRPC cuts the first gRPC message off b: its bytes (aliasing b) and
// what follows. ok is false when b does not hold the whole message yet
// (feed more and cut again); max > 0 bounds a message's length, and a
// longer one fails without waiting for its bytes.
func CutGRPC(b []byte, max int) (msg, rest []byte, ok bool, err error) {
	if len(b) < GRPCPrefix {
		return nil, b, false, nil
	}
	switch b[0] {
	case 0:
	case 1:
		return nil, b, false, ErrGRPCCompressed
	default:
		return nil, b, false, fmt.Errorf("grpc: message flags %#x (want 0 or 1)", b[0])
	}
	n := binary.BigEndian.Uint32(b[1:GRPCPrefix])
	if max > 0 && uint64(n) > uint64(max) {
		return nil, b, false, fmt.Errorf("grpc: a message of %d bytes, over the limit of %d", n, max)
	}
	if uint64(len(b)-GRPCPrefix) < uint64(n) {
		return nil, b, false, nil
	}
	end := GRPCPrefix + int(n)
	return b[GRPCPrefix:end], b[end:], true, nil
}
