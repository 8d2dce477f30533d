package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/survey"
)

// surveyImages are the kernel-written images the survey is held to `zrviz run` on, every file of
// each: the demo (Linux 6.12's own writes), an Android-like /data volume the kernel wrote, x3's volume with compressed files (an Android /data
// feature: F2FS compression, clusters, a file the kernel refuses to zero), g1's nearly full volume
// (short of free sections: f2fs_balance_fs collects garbage inside the operations, so the survey
// runs every row through a fresh mount), x4's with a block two slots map (the punch's corruption
// path) and s6's fragmented volume whose logs are open for SSR.
var surveyImages = []struct{ name, src string }{
	{"demo", ""},
	// An Android-like /data written by Linux 6.12.117 itself (survey/testdata/mkandroid.sh, the
	// zr-oracle): compressed apks, interleaved photos, a preallocated video, databases with holes.
	{"android", "../../survey/testdata/android.img.zst"},
	{"x3-compressed", "../../core/testdata/kernel-seq/x3-compressed/before.img.zst"},
	{"g1-nearly-full", "../../core/testdata/kernel-seq/g1-enospc-nearly-full/before.img.zst"},
	{"x4-dup", "../../core/testdata/kernel-seq/x4-dup-punch/before.img.zst"},
	{"s6-ssr", "../../core/testdata/kernel-seq/s6-ssr-open/before.img.zst"},
	{"corrupt", "corrupt"}, // the demo with a slot past the main area and a node cycle (corruptDemo)
}

// corruptDemo writes a copy of the demo in which /cases/holes.bin's slot 0 points past the main
// area and /cases/contiguous.bin's i_nid[0] names the inode itself (a node cycle): the survey's
// rows of those files carry the errors, and the other files are surveyed as ever.
func corruptDemo(t *testing.T) string {
	t.Helper()
	src := testutil.DemoImage(t)
	dst := filepath.Join(t.TempDir(), "corrupt.img")
	if out, err := exec.Command("cp", "--sparse=always", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	if err := os.Chmod(dst, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := imgio.OpenFileContext(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	f, err := os.OpenFile(dst, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	put := func(path string, off int, v uint32) {
		fl, err := img.Resolve(path)
		if err != nil {
			t.Fatal(err)
		}
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], v)
		if _, err := f.WriteAt(b[:], int64(fl.Inode().Blkaddr)*4096+int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	put("/cases/holes.bin", f2fs.InodeAddrOffset, img.Volume().MaxBlkaddr+5)
	cont, err := img.Resolve("/cases/contiguous.bin")
	if err != nil {
		t.Fatal(err)
	}
	put("/cases/contiguous.bin", f2fs.InodeNidOffset, cont.Inode().Ino)
	return dst
}

// TestSurveyEqualsRun: for every regular file of each image, each of the survey's three operations
// in each mode is what `zrviz run --json` prints for that operation alone (--op zero, --op punch,
// --op truncate --size 0, the whole file): the errno, the kernel's message and every counter of
// "stats", under the same names; where run fails, the row carries run's error (refused exactly
// when it is the engine's core.ErrUnmodelled).
func TestSurveyEqualsRun(t *testing.T) {
	for _, im := range surveyImages {
		t.Run(im.name, func(t *testing.T) {
			img := testutil.DemoImage(t)
			switch im.src {
			case "":
			case "corrupt":
				img = corruptDemo(t)
			default:
				img = testutil.RawImage(t, filepath.FromSlash(im.src))
			}
			out := mustRunMain(t, "survey", "--json", "--image", img)
			var s struct {
				Files []struct {
					Compressed bool                                             `json:"compressed"`
					Path       string                                           `json:"path"`
					Size       int64                                            `json:"size"`
					Error      string                                           `json:"error"`
					Ops        map[string]map[string]map[string]json.RawMessage `json:"ops"`
				} `json:"files"`
				Totals json.RawMessage `json:"totals"`
			}
			if err := json.Unmarshal([]byte(out), &s); err != nil {
				t.Fatal(err)
			}
			if len(s.Files) == 0 || s.Totals == nil {
				t.Fatalf("survey --json: %d files, totals %s", len(s.Files), s.Totals)
			}
			inspect := mustRunMain(t, "inspect", "--json", "--image", img)
			var ls inspectOutput
			if err := json.Unmarshal([]byte(inspect), &ls); err != nil {
				t.Fatal(err)
			}
			var regular []string
			for _, e := range ls.Files {
				if e.Type == "file" {
					regular = append(regular, e.Path)
				}
			}
			var got []string
			for _, f := range s.Files {
				got = append(got, f.Path)
			}
			if !slices.Equal(got, regular) {
				t.Fatalf("the survey's rows are %q, the image's regular files %q", got, regular)
			}
			ran, refused := 0, 0
			for _, f := range s.Files {
				for _, op := range survey.OpNames {
					args := []string{"run", "--json", "--image", img, "--op", op}
					if op == "truncate" {
						args = append(args, "--size", "0")
					}
					args = append(args, f.Path)
					runOut, runErr := runEmbedded(t, args...)
					row := f.Ops[op]
					if len(row) != 2 {
						t.Fatalf("%s %s: the row has modes %v", f.Path, op, slices.Collect(maps.Keys(row)))
					}
					if runErr != nil {
						for _, m := range core.Modes {
							var e struct {
								Error   string `json:"error"`
								Refused bool   `json:"refused"`
							}
							mustUnmarshal(t, mustMarshal(t, row[m.String()]), &e)
							if e.Refused {
								refused++
							}
							if e.Error != runErr.Error() || e.Refused != errors.Is(runErr, core.ErrUnmodelled) {
								t.Errorf("%s %s %s: survey error %q refused %v; zrviz run: %v", f.Path, op, m, e.Error, e.Refused, runErr)
							}
						}
						continue
					}
					ran++
					var r struct {
						Results []struct {
							Mode    string                     `json:"mode"`
							Errno   string                     `json:"errno"`
							Message string                     `json:"message"`
							Stats   map[string]json.RawMessage `json:"stats"`
						} `json:"results"`
					}
					mustUnmarshal(t, json.RawMessage(runOut), &r)
					if len(r.Results) != 2 {
						t.Fatalf("%s %s: run gave %d results", f.Path, op, len(r.Results))
					}
					for _, res := range r.Results {
						want := maps.Clone(res.Stats)
						want["errno"] = mustMarshal(t, res.Errno)
						if res.Message != "" {
							want["message"] = mustMarshal(t, res.Message)
						}
						gotRow := row[res.Mode]
						if !reflect.DeepEqual(canonical(t, gotRow), canonical(t, want)) {
							t.Errorf("%s %s %s:\nsurvey %s\nrun    %s", f.Path, op, res.Mode, jsonOf(t, gotRow), jsonOf(t, want))
						}
					}
				}
			}
			if ran == 0 {
				t.Errorf("no operation ran on any file: nothing compared")
			}
			t.Logf("%d files, %d of %d operations compared with zrviz run, %d refused rows", len(s.Files), ran, 3*len(s.Files), refused)
			// What the model refuses is a row saying so: on g1, f2fs_balance_fs collecting garbage inside
			// a zero of several dnode chunks (core.Seq's refusal, after the walk).
			compressed := 0
			for _, f := range s.Files {
				if f.Compressed {
					compressed++
				}
			}
			if (im.name == "android" || im.name == "x3-compressed") && compressed == 0 {
				t.Errorf("%s: no row is a compressed file", im.name)
			}
			if im.name == "g1-nearly-full" && refused == 0 {
				t.Errorf("%s: no refused row; zrviz run refuses an operation there", im.name)
			}
			if im.src == "corrupt" {
				// The two damaged files are rows with their errors; the rest ran.
				bad := map[string]bool{}
				for _, f := range s.Files {
					for _, op := range f.Ops {
						for _, r := range op {
							var e struct {
								Error string `json:"error"`
								Errno string `json:"errno"`
							}
							mustUnmarshal(t, mustMarshal(t, r), &e)
							if e.Error != "" || e.Errno == "EFSCORRUPTED" || e.Errno == "EUCLEAN" {
								bad[f.Path] = true
							}
						}
					}
				}
				if !bad["/cases/holes.bin"] || !bad["/cases/contiguous.bin"] || len(bad) != 2 {
					t.Errorf("rows with an error or a corruption errno: %v, want /cases/holes.bin and /cases/contiguous.bin", bad)
				}
			}
		})
	}
}

func mustUnmarshal(t *testing.T, b json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// canonical decodes a JSON object (raw, or a map of raw members) into plain values for comparison.
func canonical(t *testing.T, v any) any {
	t.Helper()
	b, ok := v.(json.RawMessage)
	if !ok {
		b = mustMarshal(t, v)
	}
	var out any
	mustUnmarshal(t, b, &out)
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	return string(mustMarshal(t, canonical(t, v)))
}

// TestSurveyText: zrviz survey on the demo prints the totals, the histogram, the top files and
// directories, and the estimate's source; --csv prints a line per regular file under its header.
func TestSurveyText(t *testing.T) {
	out := mustRunMain(t, "survey")
	for _, want := range []string{
		"40 regular files",
		"zero  per-block  21,707",
		"zero    batched     299",
		"Zeroing every file: batching saves 21,408 of 21,707 calls",
		"16.436 ms",
		"512+",
		"/seed/bench64.bin",
		"16,384 calls  16,365 saved",
		"Directories by calls saved",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("zrviz survey lacks %q:\n%s", want, out)
		}
	}
	own := mustRunMain(t, "survey", "--per-call", "1", "--per-block", "0")
	if !strings.Contains(own, "Zeroing every file: batching saves 21,408 of 21,707 calls (≈ 21.408 ms saved)") || !strings.Contains(own, "the costs given") {
		t.Errorf("zrviz survey with typed costs:\n%s", own)
	}
	csv := mustRunMain(t, "survey", "--csv")
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 41 || lines[0] != strings.Join(survey.CSVHeader(), ",") {
		t.Errorf("survey --csv: %d lines, header %q", len(lines), lines[0])
	}
	for _, args := range [][]string{{"survey", "/x"}, {"survey", "--json", "--csv"}, {"survey", "--per-call", "-1"}, {"survey", "--per-block", "x"}} {
		var ue usageError
		if _, err := runMain(t, args...); !errors.As(err, &ue) {
			t.Errorf("zrviz %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// TestSurveyProgressLines: the CLI's progress on stderr says how many files of how many, and ends
// with the last; within the first interval it says nothing.
func TestSurveyProgressLines(t *testing.T) {
	var b strings.Builder
	p := progressLines(&b, 0)
	for i := range 5 {
		p(i*2500, 10001)
	}
	p(10001, 10001)
	if got := b.String(); !strings.Contains(got, "survey: 2,500 of 10,001 files (24%)\n") || !strings.HasSuffix(got, "survey: 10,001 of 10,001 files (100%)\n") {
		t.Errorf("progress:\n%s", got)
	}
	var quiet strings.Builder
	q := progressLines(&quiet, time.Hour)
	q(1, 2)
	q(2, 2)
	if quiet.Len() != 0 {
		t.Errorf("within the first interval: %q", quiet.String())
	}
}
