package mix

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
)

// Values is a CSV values file for {{csv.COLUMN}}: its header row names
// the columns, and request seq takes row seq mod Rows() (one row for all
// of a request's placeholders, so that a row's values go together).
type Values struct {
	file  string
	cols  []string
	index map[string]int
	// cells[c][r] is column c's value in row r, as bytes so that Append
	// copies it without a conversion.
	cells [][][]byte
	lines []int // row r's line in the file
}

// ReadValuesFile reads the CSV values file at path.
func ReadValuesFile(path string) (*Values, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadValues(f, path)
}

// ReadValues reads a CSV values file (RFC 4180, as encoding/csv reads
// it: every row has the header's number of fields); file names it in
// errors. It needs a header row and at least one row of values.
func ReadValues(r io.Reader, file string) (*Values, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	cr := csv.NewReader(bytes.NewReader(data))
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &Error{File: file, Msg: "empty: want a header row naming the columns, then rows"}
	}
	if err != nil {
		return nil, csvErr(file, err)
	}
	v := &Values{file: file, cols: header, index: map[string]int{}, cells: make([][][]byte, len(header))}
	for c, name := range header {
		if name == "" {
			return nil, &Error{File: file, Line: 1, Msg: fmt.Sprintf("column %d has no name", c+1)}
		}
		if _, ok := v.index[name]; ok {
			return nil, &Error{File: file, Line: 1, Msg: fmt.Sprintf("column %q named twice", name)}
		}
		v.index[name] = c
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvErr(file, err)
		}
		line, _ := cr.FieldPos(0)
		v.lines = append(v.lines, line)
		for c, s := range rec {
			v.cells[c] = append(v.cells[c], []byte(s))
		}
	}
	if len(v.lines) == 0 {
		return nil, &Error{File: file, Line: 1, Msg: "a header row and no rows of values"}
	}
	return v, nil
}

func csvErr(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: file, Line: pe.Line, Msg: fmt.Sprintf("column %d: %v", pe.Column, pe.Err)}
	}
	return &Error{File: file, Msg: oneLine(err.Error())}
}

// Columns are the header row's names, in order.
func (v *Values) Columns() []string { return append([]string(nil), v.cols...) }

// Rows is the number of rows of values.
func (v *Values) Rows() int { return len(v.lines) }

// File is the name the values were read under.
func (v *Values) File() string { return v.file }
