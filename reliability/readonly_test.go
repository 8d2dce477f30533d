package reliability

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildZrviz builds cmd/zrviz once per test binary (the command is
// package main, so it runs as a process); TestMain removes it.
func buildZrviz(t *testing.T) string {
	t.Helper()
	bin, err := zrvizBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var binDir string

var zrvizBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zrviz-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "zrviz")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/zrviz").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ../cmd/zrviz: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

type fileState struct {
	sum   [32]byte
	mtime time.Time
	size  int64
}

func stateOf(t *testing.T, name string) fileState {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var s fileState
	copy(s.sum[:], h.Sum(nil))
	s.mtime, s.size = st.ModTime(), st.Size()
	return s
}

// readOnlyDir returns a read-only bind mount of dir when the test may
// mount (root), so that even root cannot open the images for writing;
// else dir itself (the 0444 mode and the hash check remain).
func readOnlyDir(t *testing.T, dir string) string {
	t.Helper()
	ro := t.TempDir()
	if err := exec.Command("mount", "--bind", dir, ro).Run(); err != nil {
		t.Logf("no read-only bind mount (%v); relying on mode 0444 and hashes", err)
		return dir
	}
	if err := exec.Command("mount", "-o", "remount,ro,bind", ro).Run(); err != nil {
		exec.Command("umount", ro).Run()
		t.Logf("no read-only remount (%v); relying on mode 0444 and hashes", err)
		return dir
	}
	t.Cleanup(func() { exec.Command("umount", ro).Run() })
	return ro
}

// TestImageNeverWritten: inspect, map, run and serve-with-image open the
// user's image read-only: its bytes and mtime do not change, it can be
// mode 0444 on a read-only mount, and while serving every descriptor the
// process holds on it is O_RDONLY.
func TestImageNeverWritten(t *testing.T) {
	bin := buildZrviz(t)
	dir := t.TempDir()
	raw := filepath.Join(dir, "demo.img")
	if err := os.WriteFile(raw, mustDemo(t), 0o444); err != nil {
		t.Fatal(err)
	}
	zst := filepath.Join(dir, "demo.img.zst")
	zb, err := os.ReadFile("../imgio/demo/demo.img.zst")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zst, zb, 0o444); err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile("../imgio/testdata/basic.img.gz")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "basic.img.gz"), gz, 0o444); err != nil {
		t.Fatal(err)
	}
	roDir := readOnlyDir(t, dir)
	images := []string{filepath.Join(roDir, "demo.img"), filepath.Join(roDir, "demo.img.zst")}
	served := []string{images[0], filepath.Join(roDir, "basic.img.gz")}
	images = append(images, served[1])
	before := map[string]fileState{}
	for _, p := range images {
		before[p] = stateOf(t, p)
	}
	for _, p := range images[:2] {
		cmds := [][]string{
			{"inspect", "-image", p},
			{"inspect", "-json", "-image", p},
			{"map", "-image", p, "/cases/contiguous.bin"},
			{"run", "-image", p, "/cases/contiguous.bin"},
			{"run", "-json", "-image", p, "-offset", "4096", "-length", "1MiB", "/seed/bench64.bin"},
		}
		if testing.Short() {
			// The fast tier: one command of each kind that opens the image (each expands the zstd
			// copy again); the full run takes every output form.
			cmds = [][]string{cmds[0], cmds[2], cmds[4]}
		}
		for _, args := range cmds {
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil {
				t.Errorf("zrviz %v: %v\n%.500s", args, err, out)
			}
		}
	}
	serveReadOnly(t, bin, served)
	for _, p := range images {
		if after := stateOf(t, p); after != before[p] {
			t.Errorf("%s changed: before %+v, after %+v", p, before[p], after)
		}
	}
}

var listenRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)

// serveReadOnly runs `zrviz serve` with the images, drives the API on
// them, checks the descriptors' open flags and stops it with SIGINT.
func serveReadOnly(t *testing.T, bin string, images []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "-addr", "127.0.0.1:0", "-data-dir", t.TempDir()}, images...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var base string
	var logs []string
	for sc.Scan() {
		logs = append(logs, sc.Text())
		if m := listenRE.FindString(sc.Text()); m != "" {
			base = m
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if base == "" {
		t.Fatalf("serve printed no URL:\n%s", strings.Join(logs, "\n"))
	}
	res, err := http.Get(base + "/api/images")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		ID string `json:"id"`
	}
	json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if len(list) < 3 {
		t.Errorf("serve lists %d images, want the demo and the 2 given", len(list))
	}
	for _, im := range list {
		for _, p := range []string{"", "/map?path=/cases/contiguous.bin", "/run?path=/cases/contiguous.bin", "/segments"} {
			res, err := http.Get(base + "/api/images/" + im.ID + p)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK && !(p != "" && p != "/segments" && res.StatusCode == http.StatusNotFound) {
				t.Errorf("GET %s%s: %d", im.ID, p, res.StatusCode)
			}
		}
	}
	// Every descriptor on a given image must be read-only.
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
	seen := 0
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", cmd.Process.Pid, fd.Name()))
		if err != nil {
			continue
		}
		for _, p := range images {
			if target != p {
				continue
			}
			seen++
			info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", cmd.Process.Pid, fd.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(info), "\n") {
				if v, ok := strings.CutPrefix(l, "flags:"); ok {
					fl, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
					if fl&syscall.O_ACCMODE != syscall.O_RDONLY {
						t.Errorf("%s is open with flags %#o, not read-only", p, fl)
					}
				}
			}
		}
	}
	t.Logf("serve holds %d descriptors on the given images, all O_RDONLY", seen)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v after SIGINT", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("serve did not exit within 30s of SIGINT")
	}
}
