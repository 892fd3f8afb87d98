package outfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// data is what the tests render: large enough to take many writes.
var data = bytes.Repeat([]byte("scheduled,sent,done\n"), 5000)

func renderData(w io.Writer) error {
	for b := data; len(b) > 0; b = b[min(len(b), 4096):] {
		if _, err := w.Write(b[:min(len(b), 4096)]); err != nil {
			return err
		}
	}
	return nil
}

// entries lists dir, so a test can see that nothing was left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func writeFile(t *testing.T, path, text string, perm fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "file"), "old", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "link-to-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "file"), filepath.Join(dir, "link-to-file")); err != nil {
		t.Fatal(err)
	}
	before := entries(t, dir)

	tests := []struct {
		name, path, want string // want "" for no error
	}{
		{"nothing", "", ""},
		{"stdout", "-", ""},
		{"new file", filepath.Join(dir, "new.json"), ""},
		{"existing file", filepath.Join(dir, "file"), ""},
		{"link to a file", filepath.Join(dir, "link-to-file"), ""},
		{"device", os.DevNull, ""},
		{"directory", filepath.Join(dir, "sub"), "is a directory"},
		{"directory with a slash", filepath.Join(dir, "sub") + "/", "is a directory"},
		{"link to a directory", filepath.Join(dir, "link-to-dir"), "is a directory"},
		{"missing parent", filepath.Join(dir, "missing", "x.json"), "directory " + filepath.Join(dir, "missing") + " does not exist"},
		{"parent is a file", filepath.Join(dir, "file", "x.json"), filepath.Join(dir, "file") + " is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.path)
			if got := errText(err); got != tt.want {
				t.Errorf("Check(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
	if after := entries(t, dir); !slices.Equal(after, before) {
		t.Errorf("Check left %q in the directory, want %q", after, before)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "file")); string(b) != "old" {
		t.Errorf("Check changed an existing file to %q", b)
	}
}

func TestCheckNotWritable(t *testing.T) {
	// Root writes wherever it likes, so a mode cannot make a place
	// unwritable for it: the test means nothing there.
	if os.Geteuid() == 0 {
		t.Skip("root can write to read-only files and directories")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	writeFile(t, filepath.Join(dir, "locked.json"), "old", 0o444)

	tests := []struct {
		name, path, want string
	}{
		{"directory not writable", filepath.Join(ro, "x.json"), "directory " + ro + " is not writable"},
		{"file not writable", filepath.Join(dir, "locked.json"), "is not writable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.path)
			if got := errText(err); got != tt.want {
				t.Errorf("Check(%q) = %q, want %q", tt.path, got, tt.want)
			}
			if !errors.Is(err, fs.ErrPermission) {
				t.Errorf("Check(%q) = %v, which is not fs.ErrPermission", tt.path, err)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	errRender := errors.New("render failed")
	failing := func(w io.Writer) error {
		w.Write(data[:100])
		return errRender
	}
	tests := []struct {
		name    string
		old     string // content at path before, "" for none
		oldPerm fs.FileMode
		fn      func(io.Writer) error
		wantErr error
		want    string      // content at path after, "" for none
		perm    fs.FileMode // its mode
	}{
		{name: "new file", fn: renderData, want: string(data), perm: 0o644},
		{name: "replaces a file, keeping its mode", old: "old", oldPerm: 0o600, fn: renderData, want: string(data), perm: 0o600},
		{name: "render fails on a new file", fn: failing, wantErr: errRender},
		{name: "render fails on a file", old: "old", oldPerm: 0o644, fn: failing, wantErr: errRender, want: "old", perm: 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "run.json")
			if tt.old != "" {
				writeFile(t, path, tt.old, tt.oldPerm)
			}
			kept, err := Write(path, nil, tt.fn)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Write: %v, want %v", err, tt.wantErr)
			}
			if kept != "" {
				t.Errorf("Write kept %q, want nothing kept", kept)
			}
			b, rerr := os.ReadFile(path)
			switch {
			case tt.want == "" && rerr == nil:
				t.Errorf("Write left %d bytes at the path, want no file", len(b))
			case tt.want != "" && string(b) != tt.want:
				t.Errorf("the path holds %d bytes (%v), want %d", len(b), rerr, len(tt.want))
			}
			if tt.want != "" {
				if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != tt.perm {
					t.Errorf("mode %v, want %v", fi.Mode().Perm(), tt.perm)
				}
			}
			want := []string{"run.json"}
			if tt.want == "" {
				want = nil
			}
			if got := entries(t, dir); !slices.Equal(got, want) {
				t.Errorf("directory holds %q, want %q", got, want)
			}
		})
	}
}

func TestWriteNothingAndStdout(t *testing.T) {
	calls := 0
	fn := func(w io.Writer) error { calls++; return renderData(w) }
	var stdout bytes.Buffer
	if kept, err := Write("", &stdout, fn); kept != "" || err != nil || calls != 0 {
		t.Errorf(`Write("") = %q, %v after %d calls, want "", nil after none`, kept, err, calls)
	}
	if kept, err := Write("-", &stdout, fn); kept != "" || err != nil {
		t.Errorf(`Write("-") = %q, %v, want "", nil`, kept, err)
	}
	if !bytes.Equal(stdout.Bytes(), data) {
		t.Errorf("stdout got %d bytes, want %d", stdout.Len(), len(data))
	}
}

// A symbolic link stays one: the file it leads to is written.
func TestWriteThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "run-42.json")
	writeFile(t, target, "old", 0o644)
	link := filepath.Join(dir, "latest.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if kept, err := Write(link, nil, renderData); kept != "" || err != nil {
		t.Fatalf("Write = %q, %v", kept, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); !bytes.Equal(b, data) {
		t.Errorf("the linked file holds %d bytes, want %d", len(b), len(data))
	}
}

// The path became a directory between Check and Write: the rename fails,
// and the rendered file stays beside it.
func TestWriteKeepsWhenRenameFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(path, "inside"), "x", 0o644)

	kept, err := Write(path, nil, renderData)
	if got := errText(err); got != "is a directory" {
		t.Errorf("Write: %q, want %q", got, "is a directory")
	}
	if filepath.Dir(kept) != dir || !strings.HasPrefix(filepath.Base(kept), ".run.json.tmp-") {
		t.Errorf("kept %q, want .run.json.tmp-* in %s", kept, dir)
	}
	if b, err := os.ReadFile(kept); !bytes.Equal(b, data) {
		t.Errorf("the kept file holds %d bytes (%v), want %d", len(b), err, len(data))
	}
}

// The directory was removed between Check and Write: the data is rendered
// into os.TempDir() and kept there.
func TestWriteKeepsInTempDirWhenParentRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir on Unix
	sub := filepath.Join(t.TempDir(), "results")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "run.json")
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}

	calls := 0
	kept, err := Write(path, nil, func(w io.Writer) error { calls++; return renderData(w) })
	if want := "directory " + sub + " does not exist"; errText(err) != want {
		t.Errorf("Write: %q, want %q", errText(err), want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write: %v, which is not fs.ErrNotExist", err)
	}
	if filepath.Dir(kept) != os.TempDir() {
		t.Errorf("kept %q, want a file in %s", kept, os.TempDir())
	}
	if b, err := os.ReadFile(kept); !bytes.Equal(b, data) {
		t.Errorf("the kept file holds %d bytes (%v), want %d", len(b), err, len(data))
	}
	if calls != 1 {
		t.Errorf("fn called %d times, want 1", calls)
	}
}

// Writing itself fails (the disk is full; stdout is closed): fn renders
// again into os.TempDir(), which holds all of it.
func TestWriteRendersAgainWhenWritingFails(t *testing.T) {
	full := "/dev/full" // every write fails with ENOSPC
	if _, err := os.Stat(full); err != nil {
		t.Skipf("%s: %v", full, err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// Write through a link, so that the test cannot replace /dev/full.
	link := filepath.Join(t.TempDir(), "run.json")
	if err := os.Symlink(full, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
		stdout           io.Writer
	}{
		{"disk full", link, "no space left on device", nil},
		{"stdout closed", "-", "file already closed", closedWriter{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			kept, err := Write(tt.path, tt.stdout, func(w io.Writer) error { calls++; return renderData(w) })
			if got := errText(err); got != tt.want {
				t.Errorf("Write: %q, want %q", got, tt.want)
			}
			if filepath.Dir(kept) != tmp {
				t.Errorf("kept %q, want a file in %s", kept, tmp)
			}
			if b, err := os.ReadFile(kept); !bytes.Equal(b, data) {
				t.Errorf("the kept file holds %d bytes (%v), want %d", len(b), err, len(data))
			}
			if calls != 2 {
				t.Errorf("fn called %d times, want 2", calls)
			}
		})
	}
}

type closedWriter struct{}

func (closedWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestCheckAll(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		outputs []Output
		want    string
	}{
		{"none", nil, ""},
		{"distinct", []Output{{"--output", "run.json"}, {"--log", "run.csv"}, {"--html", ""}}, ""},
		{"stdout twice is not compared", []Output{{"--output", "-"}, {"--log", "-"}}, ""},
		{"first problem named", []Output{{"--output", "run.json"}, {"--html", "sub"}, {"--log", "missing/x"}}, `--html "sub": is a directory`},
		{"same file twice", []Output{{"--output", "run.json"}, {"--log", "./sub/../run.json"}}, `--log "./sub/../run.json": --output writes it too`},
		{"same file by absolute path", []Output{{"--output", "run.json"}, {"--hlog", filepath.Join(dir, "run.json")}}, `--hlog "` + filepath.Join(dir, "run.json") + `": --output writes it too`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(CheckAll(tt.outputs...)); got != tt.want {
				t.Errorf("CheckAll = %q, want %q", got, tt.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
