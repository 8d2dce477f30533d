package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
)

// runMain runs zrviz with args and returns what it printed. A command that reads one image and is
// given none reads the demo from the raw copy the test binaries share (testutil.DemoImage): the
// same bytes, without expanding 256 MiB for each of some 40 commands. runEmbedded runs a command
// as given, for the tests of the embedded default itself.
func runMain(t *testing.T, args ...string) (string, error) {
	t.Helper()
	if len(args) > 0 && imageCommands[args[0]] && !slices.ContainsFunc(args, func(a string) bool {
		return a == "--image" || a == "-image" || strings.HasPrefix(a, "--image=") || strings.HasPrefix(a, "-image=")
	}) {
		args = append([]string{args[0], "--image", testutil.DemoImage(t)}, args[1:]...)
	}
	return runEmbedded(t, args...)
}

// imageCommands are the commands with an --image flag (imageFlag) that always read an image
// (exercise reads one only with --kind file).
var imageCommands = map[string]bool{"inspect": true, "map": true, "run": true, "block": true, "gc": true, "survey": true}

func runEmbedded(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), args, &stdout, &stderr)
	return stdout.String(), err
}

func mustRunMain(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runMain(t, args...)
	if err != nil {
		t.Fatalf("zrviz %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// TestInspectJSONListsEveryDemoPath reads the embedded demo, the default of every command that reads
// one image.
func TestInspectJSONListsEveryDemoPath(t *testing.T) {
	var got inspectOutput
	out, err := runEmbedded(t, "inspect", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Volume.BlockSize != 4096 || got.Volume.MainBlkaddr != 4096 || got.Volume.SegmentCount != 127 {
		t.Errorf("volume = %+v, want the demo's geometry (4096-byte blocks, main at 4096, 127 segments)", got.Volume)
	}
	want := readDemoFiles(t)
	paths := map[string]imgio.Entry{}
	for _, f := range got.Files {
		paths[f.Path] = f
	}
	for path, w := range want {
		g, ok := paths[path]
		if !ok {
			t.Errorf("inspect --json misses %s", path)
			continue
		}
		if g.Ino != w.Ino || g.Type != w.Type || (w.Type == imgio.TypeFile && g.Size != w.Size) {
			t.Errorf("%s = %+v, want %+v", path, g, w)
		}
	}
	if len(got.Files) != len(want)+1 { // + the root
		t.Errorf("inspect --json lists %d paths, want %d and the root", len(got.Files), len(want))
	}
}

// readDemoFiles parses imgio/demo/demo.files.txt: "ino type size i_blocks path".
func readDemoFiles(t *testing.T) map[string]imgio.Entry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "imgio", "demo", "demo.files.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]imgio.Entry{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e imgio.Entry
		var typ string
		var blocks int
		if _, err := fmt.Sscan(line, &e.Ino, &typ, &e.Size, &blocks, &e.Path); err != nil {
			t.Fatalf("demo.files.txt: %q: %v", line, err)
		}
		e.Type = imgio.FileType(typ)
		out[e.Path] = e
	}
	return out
}

func TestMapJSONGivesTheKernelsRuns(t *testing.T) {
	var got mapOutput
	if err := json.Unmarshal([]byte(mustRunMain(t, "map", "--json", "/seed/bench64.bin")), &got); err != nil {
		t.Fatal(err)
	}
	// imgio/demo/README.md: indices 0–511 at 34304, 512–13311 at 6144, 13312–16383 at 19456.
	want := []imgio.Extent{
		{Index: 0, Count: 512, State: "addr", Addr: 34304},
		{Index: 512, Count: 12800, State: "addr", Addr: 6144},
		{Index: 13312, Count: 3072, State: "addr", Addr: 19456},
	}
	if got.Ino != 10 || got.Size != 67108864 || len(got.Extents) != len(want) {
		t.Fatalf("map = ino %d size %d extents %+v", got.Ino, got.Size, got.Extents)
	}
	for i := range want {
		if got.Extents[i] != want[i] {
			t.Errorf("extent %d = %+v, want %+v", i, got.Extents[i], want[i])
		}
	}
	text := mustRunMain(t, "map", "/cases/indirect.bin")
	for _, s := range []string{"24768–27839", "i_nid[2]/0", "3,072 slots"} {
		if !strings.Contains(text, s) {
			t.Errorf("map text output lacks %q:\n%s", s, text)
		}
	}
}

func TestRunJSONMatchesKernelCase1(t *testing.T) {
	var got struct {
		Path    string `json:"path"`
		Length  int64  `json:"length"`
		Results []struct {
			Mode  string      `json:"mode"`
			Errno string      `json:"errno"`
			Calls [][2]uint32 `json:"calls"`
			Stats struct {
				Calls               uint64 `json:"calls"`
				SITLockAcquisitions uint64 `json:"sitLockAcquisitions"`
				BlocksInvalidated   uint64 `json:"blocksInvalidated"`
				DnodeChunks         uint64 `json:"dnodeChunks"`
			} `json:"stats"`
			After struct {
				Extents []imgio.Extent `json:"extents"`
			} `json:"after"`
		} `json:"results"`
	}
	out := mustRunMain(t, "run", "--json", "--mode", "both", "/seed/bench64.bin")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Length != 67108864 || len(got.Results) != 2 || got.Results[0].Mode != "per-block" || got.Results[1].Mode != "batched" {
		t.Fatalf("run --json: length %d, results %d", got.Length, len(got.Results))
	}
	batched, err := os.ReadFile(filepath.Join("..", "..", "core", "testdata", "kernel-cases", "1.trace.batched"))
	if err != nil {
		t.Fatal(err)
	}
	var wantBatched [][2]uint32
	for _, line := range strings.Split(strings.TrimSpace(string(batched)), "\n") {
		var c [2]uint32
		if _, err := fmt.Sscan(line, &c[0], &c[1]); err != nil {
			t.Fatal(err)
		}
		wantBatched = append(wantBatched, c)
	}
	pb, b := got.Results[0], got.Results[1]
	if pb.Stats.Calls != 16384 || len(pb.Calls) != 16384 || pb.Calls[0] != [2]uint32{34304, 1} {
		t.Errorf("per-block: %d calls, first %v; want 16384 from (34304, 1)", pb.Stats.Calls, pb.Calls[:1])
	}
	if len(b.Calls) != len(wantBatched) {
		t.Fatalf("batched: %d calls, want %d", len(b.Calls), len(wantBatched))
	}
	for i := range wantBatched {
		if b.Calls[i] != wantBatched[i] {
			t.Errorf("batched call %d = %v, want %v", i, b.Calls[i], wantBatched[i])
		}
	}
	for _, r := range got.Results {
		if r.Errno != "" || r.Stats.BlocksInvalidated != 16384 || r.Stats.DnodeChunks != 17 ||
			len(r.After.Extents) != 1 || r.After.Extents[0] != (imgio.Extent{Count: 16384, State: "new"}) {
			t.Errorf("%s: errno %q, %d invalidated, %d chunks, after %+v", r.Mode, r.Errno,
				r.Stats.BlocksInvalidated, r.Stats.DnodeChunks, r.After.Extents)
		}
	}
	text := mustRunMain(t, "run", "--offset", "1MiB", "--length", "0x100000", "/cases/contiguous.bin")
	for _, s := range []string{"per-block", "batched", "256", "f2fs_invalidate_blocks(22784, 256)"} {
		if !strings.Contains(text, s) {
			t.Errorf("run text output lacks %q:\n%s", s, text)
		}
	}
}

func TestRunReportsKernelErrnos(t *testing.T) {
	var got struct {
		Results []struct {
			Mode  string      `json:"mode"`
			Errno string      `json:"errno"`
			Calls [][2]uint32 `json:"calls"`
		} `json:"results"`
	}
	out := mustRunMain(t, "run", "--json", "--length", "0", "/cases/contiguous.bin")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Results {
		if r.Errno != "EINVAL" || len(r.Calls) != 0 {
			t.Errorf("%s: length 0 gave %q with %d calls, want EINVAL and none (kernel case 10)", r.Mode, r.Errno, len(r.Calls))
		}
	}
	out = mustRunMain(t, "run", "--json", "--length", "4096", "/docs")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Results[0].Errno != "EISDIR" {
		t.Errorf("zeroing a directory gave %q, want EISDIR (kernel case 11)", got.Results[0].Errno)
	}
}

func TestCommandErrors(t *testing.T) {
	var ue usageError
	if _, err := runMain(t, "frobnicate"); !errors.As(err, &ue) {
		t.Errorf("unknown command: %v, want a usage error", err)
	}
	if _, err := runMain(t, "map"); !errors.As(err, &ue) {
		t.Errorf("map without PATH: %v, want a usage error", err)
	}
	if _, err := runMain(t, "run", "--mode", "sideways", "/seed/bench64.bin"); !errors.As(err, &ue) {
		t.Errorf("bad --mode: %v, want a usage error", err)
	}
	if _, err := runMain(t, "map", "/no/such/file"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing path: %v, want fs.ErrNotExist", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.img")
	if err := os.WriteFile(junk, bytes.Repeat([]byte{0x5a}, 1<<20), 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := runMain(t, "inspect", "--image", junk); !errors.Is(err, imgio.ErrNotF2FS) {
		t.Errorf("junk image: %v, want imgio.ErrNotF2FS", err)
	}
	if _, err := runMain(t, "inspect", "--image", filepath.Join(t.TempDir(), "absent.img")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent image: %v, want fs.ErrNotExist", err)
	}
	if _, err := runMain(t, "inspect", "--help"); err == nil {
		t.Error("--help returned no error; main relies on flag.ErrHelp to exit 0")
	}
}

func TestServeServesTheDemoUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--quiet"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("serve did not print its URL: %q", line)
	}
	url := strings.Fields(line[i:])[0]
	go io.Copy(io.Discard, pr)
	resp, err := http.Get(url + "api/images/demo")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %sapi/images/demo = %d, want 200", url, resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v after cancel", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30 s of its context being cancelled")
	}
}

func TestRunFollowsSymlinksAsOpenDoes(t *testing.T) {
	var got struct {
		Path    string `json:"path"`
		Length  int64  `json:"length"`
		Results []struct {
			Calls [][2]uint32 `json:"calls"`
		} `json:"results"`
	}
	out := mustRunMain(t, "run", "--json", "--mode", "batched", "--length", "8KiB", "/docs/contiguous.link")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// /docs/contiguous.link → ../cases/contiguous.bin, whose blocks start at 22528.
	if got.Path != "/cases/contiguous.bin" || len(got.Results) != 1 || len(got.Results[0].Calls) != 1 ||
		got.Results[0].Calls[0] != [2]uint32{22528, 2} {
		t.Errorf("run on the symlink: %s", out)
	}
}

func TestServeTheSameImageTwiceServesItOnce(t *testing.T) {
	raw := testutil.DemoImage(t) // a raw copy of the demo: the embedded one, once more

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--quiet", raw, raw}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v (exit %v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	if !strings.Contains(line, "serving 2 images ") {
		t.Errorf("serve demo + the same image twice: %q, want 2 images served", line)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestFlagsAnywhere: flags after PATH count, "--" ends them, and the range syntax is the web's.
func TestFlagsAnywhere(t *testing.T) {
	type result struct {
		Offset  int64 `json:"offset"`
		Length  int64 `json:"length"`
		Results []struct {
			Mode  string `json:"mode"`
			Errno string `json:"errno"`
		} `json:"results"`
	}
	var got result
	out := mustRunMain(t, "run", "/cases/contiguous.bin", "--mode", "batched", "--offset", "0x100000", "--length", "4KiB", "--json")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Offset != 1<<20 || got.Length != 4096 || len(got.Results) != 1 || got.Results[0].Mode != "batched" {
		t.Errorf("flags after PATH were not all taken: %+v", got)
	}
	// Past EOF the default length is 0, which the kernel refuses: never a negative length.
	got = result{}
	out = mustRunMain(t, "run", "--json", "/cases/contiguous.bin", "--offset", "7MiB")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Length != 0 || got.Results[0].Errno != "EINVAL" {
		t.Errorf("offset past EOF: length %d, errno %q; want 0 and EINVAL", got.Length, got.Results[0].Errno)
	}
	var ue usageError
	if _, err := runMain(t, "run", "--json", "--", "/cases/contiguous.bin"); err != nil {
		t.Errorf(`"--" before PATH: %v`, err)
	}
	if _, err := runMain(t, "run", "--", "--mode"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "PATH") {
		t.Errorf(`"--" did not end the flags: %v`, err)
	}
	if _, err := runMain(t, "run", "/a", "/b"); !errors.As(err, &ue) {
		t.Errorf("two PATHs: %v, want a usage error", err)
	}
}

// TestServeDataDir: serve keeps its uploads in --data-dir (default: the user cache dir's zrviz, here
// under a private XDG_CACHE_HOME), takes the directory for itself, and returns no error when its
// context ends.
func TestServeDataDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache dir: %v", err)
	}
	start := func(args ...string) (url string, stop func() error) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- Main(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--quiet"}, args...), pw, io.Discard)
			pw.Close()
		}()
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err != nil {
			cancel()
			t.Fatalf("serve printed nothing: %v (%v)", err, <-done)
		}
		go io.Copy(io.Discard, pr)
		i := strings.Index(line, "http://")
		return strings.Fields(line[i:])[0], func() error { cancel(); return <-done }
	}
	url, stop := start()
	if res, err := http.Get(url + "api/images"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/images: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	want := filepath.Join(cache, "zrviz")
	if st, err := os.Stat(filepath.Join(want, "uploads")); err != nil || !st.IsDir() {
		t.Errorf("default data dir: %s/uploads: %v", want, err)
	}
	// A second server on the same directory is refused.
	if err := Main(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--quiet"}, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "in use") {
		t.Errorf("second serve on the data dir: %v, want 'in use'", err)
	}
	if err := stop(); err != nil {
		t.Errorf("serve: %v", err)
	}
	if _, err := runMain(t, "serve", "--max-uploads", "0"); err == nil {
		t.Error("--max-uploads 0 accepted")
	}
}

// TestServeBusyPort: a taken port names the flag that picks another.
func TestServeBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = Main(ctx, []string{"serve", "--quiet", "--data-dir", t.TempDir(), "--addr", ln.Addr().String()}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--addr") || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("serve on a taken port: %v; want EADDRINUSE and a hint of --addr", err)
	}
}
