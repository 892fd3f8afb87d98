package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// Write writes res as indented JSON.
func Write(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// Read reads a JSON result; name is used in error messages. It refuses
// results of another version and results that do not parse. Histograms
// written in the old double-base64 form come back in the standard form.
func Read(r io.Reader, name string) (*Result, error) {
	dec := json.NewDecoder(r)
	var res Result
	if err := dec.Decode(&res); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: truncated result: %v", name, err)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: corrupt result at byte %d: %v", name, se.Offset, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return nil, fmt.Errorf("%s: not an openload result: the file holds a JSON %s, a result is an object", name, te.Value)
			}
			return nil, fmt.Errorf("%s: not an openload result: %s is a JSON %s, where a result has %s", name, te.Field, te.Value, jsonKind(te.Type))
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if res.Version == 0 {
		return nil, fmt.Errorf("%s: not an openload result (no version)", name)
	}
	if res.Version != Version {
		return nil, fmt.Errorf("%s: result version %d, this openload reads version %d", name, res.Version, Version)
	}
	// Results written before the standard form are read in it, so that
	// re-encoding one (openload report --format json) upgrades it.
	hs := &res.Histograms
	for _, p := range hs.named() {
		*p.s = standardForm(*p.s)
	}
	for i := range res.ServerTiming {
		res.ServerTiming[i].Histogram = standardForm(res.ServerTiming[i].Histogram)
	}
	return &res, nil
}

// jsonKind names the JSON value a Go value of type t is read from, as an
// error tells a user who never saw the Go type.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another value"
}
