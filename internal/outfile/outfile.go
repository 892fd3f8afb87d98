// Package outfile writes openload's output files, all of them the same way.
//
// A load run cannot be repeated for free: the minutes it took, and the state
// of the service it measured, are gone once it ends. So an output is treated
// as the only copy of what was measured:
//
//   - Check is called for every output before anything is sent, so that a
//     path that cannot be written (a directory, a missing parent, a place not
//     writable) costs nothing rather than the whole run.
//   - Write renders into a temporary file beside the target and renames it
//     into place, so that no reader ever sees a half-written file at the path,
//     and an interrupted or failed write leaves the earlier file as it was.
//   - When writing still fails after the data was measured (the directory was
//     removed, or replaced the file, or the disk is full), Write keeps the
//     data under a temporary name and returns that name with the error, so
//     the caller can say where it is. Measured data is never dropped silently.
//
// Errors are plain sentences about the path, without the path itself or the
// name the caller knows it by (a flag, say): the caller prefixes both.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Check reports whether path can be written by Write, before there is
// anything to write. "" (no output) and "-" (standard output) are always
// fine. Otherwise it fails when path is a directory, when its parent is
// missing or not a directory, when an existing file at path is not
// writable, or when no file can be created beside it: it creates and
// removes a temporary file there, since trying is the only way to know.
//
// An existing path that is not a regular file (a device such as /dev/null,
// a pipe, a symbolic link) is written in place by Write, so for it Check
// only asks that it not be a directory and, when it leads to a regular
// file, that the file be writable.
func Check(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if inPlace(path) {
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return &problem{plain(err).Error(), err}
		case fi.IsDir():
			return &problem{"is a directory", nil}
		case fi.Mode().IsRegular():
			return checkWritable(path)
		}
		return nil
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return &problem{"is a directory", nil}
		}
		if err := checkWritable(path); err != nil {
			return err
		}
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &problem{fmt.Sprintf("directory %s does not exist", dir), err}
	case errors.Is(err, syscall.ENOTDIR):
		return &problem{fmt.Sprintf("%s is not a directory", dir), err}
	case err != nil:
		return &problem{fmt.Sprintf("directory %s: %v", dir, plain(err)), err}
	case !fi.IsDir():
		return &problem{fmt.Sprintf("%s is not a directory", dir), nil}
	}
	f, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return &problem{fmt.Sprintf("directory %s is not writable", dir), err}
		}
		return &problem{fmt.Sprintf("directory %s is not writable: %v", dir, plain(err)), err}
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// checkWritable opens the existing file path for writing, without changing
// it. A file the user made read-only is not replaced behind their back,
// even though the rename Write uses would allow it.
func checkWritable(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return &problem{"is not writable", err}
		}
		return &problem{plain(err).Error(), err}
	}
	f.Close()
	return nil
}

// Write writes what fn renders to path, and reports where the data was
// kept when it could not be written there.
//
//   - "" writes nothing and does not call fn.
//   - "-" renders to stdout.
//   - A new path or an existing regular file is rendered into a temporary
//     file beside it (.NAME.tmp-*), which is then renamed into place: the
//     path holds either its earlier content or all of the new one. A new
//     file gets mode 0644; a replaced one keeps its mode.
//   - Any other existing path (a device such as /dev/null, a pipe, a
//     symbolic link) is opened and written in place, as a shell's > would:
//     replacing it would destroy it.
//
// When fn returns an error and nothing failed to be written, that error is
// returned, the temporary file is removed and kept is "".
//
// When the data cannot reach path, Write returns why and, in kept, the name
// of a file that holds all of it (kept is "" when that failed too):
//
//   - the rename into place failed (path became a directory, say): kept is
//     the rendered temporary file beside path;
//   - the temporary file could not be created (the directory is gone), or
//     writing to the destination failed (the disk is full, stdout is
//     closed): fn renders again into a file in os.TempDir(), which is kept.
//
// fn is therefore called a second time in the second case, and must render
// the same bytes each time it is called, as a function of data already
// measured does.
func Write(path string, stdout io.Writer, fn func(io.Writer) error) (kept string, err error) {
	switch {
	case path == "":
		return "", nil
	case path == "-":
		w := &recorder{w: stdout}
		err := fn(w)
		if w.err != nil {
			return keepInTemp(path, fn, &problem{plain(w.err).Error(), w.err})
		}
		return "", err
	case inPlace(path):
		return writeInPlace(path, fn)
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern(path))
	if err != nil {
		return keepInTemp(path, fn, explain(path, err))
	}
	// A mode that cannot be set leaves CreateTemp's 0600, which loses
	// nothing.
	_ = f.Chmod(perm)
	werr, err := renderOrRemove(f, fn)
	switch {
	case err != nil:
		return "", err
	case werr != nil:
		return keepInTemp(path, fn, explain(path, werr))
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return f.Name(), explain(path, err)
	}
	return "", nil
}

// writeInPlace is Write to an existing path that is not a regular file.
func writeInPlace(path string, fn func(io.Writer) error) (kept string, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return keepInTemp(path, fn, explain(path, err))
	}
	werr, err := render(f, fn)
	switch {
	case err != nil:
		return "", err
	case werr != nil:
		return keepInTemp(path, fn, explain(path, werr))
	}
	return "", nil
}

// keepInTemp renders fn into a new file in os.TempDir() after the data
// could not be written to path for the reason cause, and returns the
// file's name with cause.
func keepInTemp(path string, fn func(io.Writer) error, cause error) (kept string, err error) {
	f, err := os.CreateTemp("", strings.TrimPrefix(tempPattern(path), "."))
	if err != nil {
		return "", fmt.Errorf("%w; keeping the data in %s failed too: %v", cause, os.TempDir(), plain(err))
	}
	werr, err := renderOrRemove(f, fn)
	switch {
	case err != nil:
		return "", err
	case werr != nil:
		return "", fmt.Errorf("%w; keeping the data in %s failed too: %v", cause, os.TempDir(), plain(werr))
	}
	return f.Name(), cause
}

// renderOrRemove is render into a temporary file f, removed when it does
// not hold what fn rendered.
func renderOrRemove(f *os.File, fn func(io.Writer) error) (writeErr, fnErr error) {
	writeErr, fnErr = render(f, fn)
	if writeErr != nil || fnErr != nil {
		os.Remove(f.Name())
	}
	return writeErr, fnErr
}

// render calls fn on f and closes f. writeErr is the first error of
// writing to or closing f, which means the file does not hold what fn
// rendered; fnErr is fn's own error when nothing failed to be written.
func render(f *os.File, fn func(io.Writer) error) (writeErr, fnErr error) {
	w := &recorder{w: f}
	err := fn(w)
	cerr := f.Close()
	switch {
	case w.err != nil:
		return w.err, nil
	case err != nil:
		return nil, err
	}
	return cerr, nil
}

// A recorder passes writes on and remembers the first that failed, which
// tells a failure to write apart from a failure of what renders.
type recorder struct {
	w   io.Writer
	err error
}

func (r *recorder) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

// inPlace reports whether path exists and is neither a regular file nor a
// directory, so that Write opens it rather than replacing it.
func inPlace(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}

// tempPattern is the os.CreateTemp pattern of path's temporary files.
func tempPattern(path string) string {
	name := filepath.Base(path)
	switch {
	case path == "-":
		name = "stdout"
	case strings.ContainsRune(name, filepath.Separator): // the root
		name = "output"
	}
	return "." + name + ".tmp-*"
}

// explain says why err stopped a write to path: what Check finds now,
// which names the cause in the words Check uses, or else err's own words.
func explain(path string, err error) error {
	if cerr := Check(path); cerr != nil {
		return cerr
	}
	return &problem{plain(err).Error(), err}
}

// plain strips the operation and path that *os.PathError and friends put
// in front of the cause: the caller names the path once.
func plain(err error) error {
	var (
		pe *fs.PathError
		le *os.LinkError
		se *os.SyscallError
	)
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	case errors.As(err, &se):
		return se.Err
	}
	return err
}

// A problem is an error in outfile's words that still unwraps to the
// system's error, for errors.Is.
type problem struct {
	text string
	err  error
}

func (p *problem) Error() string { return p.text }
func (p *problem) Unwrap() error { return p.err }

// An Output is one file a command writes: Name is what the caller calls it
// (a flag, say) and Path where it goes ("" for nowhere, "-" for stdout).
type Output struct {
	Name, Path string
}

// CheckAll checks every output's path with Check, and that no two outputs
// write the same file, and returns the first problem as
// `NAME "PATH": problem`. Outputs to "" and "-" are not compared.
func CheckAll(outputs ...Output) error {
	for i, o := range outputs {
		if err := Check(o.Path); err != nil {
			return fmt.Errorf("%s %q: %w", o.Name, o.Path, err)
		}
		for _, p := range outputs[:i] {
			if samePath(p.Path, o.Path) {
				return fmt.Errorf("%s %q: %s writes it too", o.Name, o.Path, p.Name)
			}
		}
	}
	return nil
}

// samePath reports whether a and b name one file: the same path once
// made absolute, or the same existing file (through a link, say).
func samePath(a, b string) bool {
	if a == "" || a == "-" || b == "" || b == "-" {
		return false
	}
	aa, erra := filepath.Abs(a)
	ab, errb := filepath.Abs(b)
	if erra == nil && errb == nil && aa == ab {
		return true
	}
	fa, erra := os.Stat(a)
	fb, errb := os.Stat(b)
	return erra == nil && errb == nil && os.SameFile(fa, fb)
}
