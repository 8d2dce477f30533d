package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
)

// TestEveryCommandIsInTheUsageAndHelp: each command of the table Main dispatches on is in `zrviz
// help`, in the unknown-command message, in the package documentation, and answers --help with its
// own synopsis. The lists are made from the table; this holds them to it.
func TestEveryCommandIsInTheUsageAndHelp(t *testing.T) {
	help := mustRunMain(t, "help")
	_, unknown := runMain(t, "frobnicate")
	var ue usageError
	if !errors.As(unknown, &ue) {
		t.Fatalf("unknown command: %v, want a usage error", unknown)
	}
	// "unknown command "frobnicate" (want serve, inspect, … or gc; see zrviz help)"
	_, list, _ := strings.Cut(ue.msg, "(want ")
	list, _, _ = strings.Cut(list, "; see")
	wanted := strings.FieldsFunc(strings.ReplaceAll(list, " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
	if len(wanted) != len(commands()) {
		t.Errorf("the unknown-command message names %d commands (%q), the table has %d", len(wanted), wanted, len(commands()))
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src[:bytes.Index(src, []byte("package main"))])
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(help, "\n  zrviz "+c.name+" ") {
				t.Errorf("zrviz help has no line for %s:\n%s", c.name, help)
			}
			if !slices.Contains(wanted, c.name) {
				t.Errorf("the unknown-command message omits %s: %s", c.name, ue.msg)
			}
			if !strings.Contains(doc, "//\tzrviz "+c.name+" ") {
				t.Errorf("main.go's package documentation has no line for %s", c.name)
			}
			var stderr bytes.Buffer
			err := Main(context.Background(), []string{c.name, "--help"}, io.Discard, &stderr)
			if !errors.Is(err, flag.ErrHelp) {
				t.Errorf("zrviz %s --help: %v, want flag.ErrHelp (main exits 0 on it)", c.name, err)
			}
			if !strings.HasPrefix(stderr.String(), "Usage: zrviz "+c.name+" ") {
				t.Errorf("zrviz %s --help printed %q, want its synopsis first", c.name, firstLine(stderr.String()))
			}
		})
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestEveryCommandTakesTheDemoByName: every command of the table that reads an image takes the
// embedded demo by the name "demo" where it takes an image (--image, diff's A and B, serve's IMG),
// and prints what it prints for the same bytes given as a file. A command added to the table
// without an entry here fails, so the class stays covered.
func TestEveryCommandTakesTheDemoByName(t *testing.T) {
	raw := testutil.DemoImage(t) // the demo's bytes, expanded, as a file
	demoArgs := map[string]struct {
		args    func(img string) []string // the command's arguments, img where the image goes
		noImage string                    // why the command takes no image
	}{
		"serve":    {},                                                              // below: it serves, it prints no result
		"sandbox":  {noImage: "a slot list typed by hand runs on a synthetic file"}, // no image to name
		"site":     {noImage: "it writes the static site, which carries the demo in its WebAssembly"},
		"inspect":  {args: func(img string) []string { return []string{"--image", img} }},
		"map":      {args: func(img string) []string { return []string{"--image", img, "/seed/bench64.bin"} }},
		"run":      {args: func(img string) []string { return []string{"--image", img, "--length", "64KiB", "/cases/prealloc.bin"} }},
		"exercise": {args: func(img string) []string { return []string{"--kind", "file", "--seed", "7", "-c", "--image", img} }},
		"block":    {args: func(img string) []string { return []string{"--image", img, "22528"} }},
		"diff":     {args: func(img string) []string { return []string{img, raw} }},
		"gc":       {args: func(img string) []string { return []string{"--image", img, "checkpoint", "gc", "1"} }},
		"survey":   {args: func(img string) []string { return []string{"--image", img} }},
	}
	for _, c := range commands() {
		d, ok := demoArgs[c.name]
		if !ok {
			t.Errorf("command %s is in the table but not in this test: say how it takes the demo", c.name)
			continue
		}
		if d.noImage != "" || c.name == "serve" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			byName, err := runEmbedded(t, append([]string{c.name}, d.args("demo")...)...)
			if err != nil {
				t.Fatalf("zrviz %s %s: %v", c.name, strings.Join(d.args("demo"), " "), err)
			}
			byFile := mustRunMain(t, append([]string{c.name}, d.args(raw)...)...)
			// The image's name and format are printed where the command names the image (inspect's
			// first line, exercise's image, diff's A): the embedded demo is demo.img, an Android
			// sparse image (inside zstd: imgio/demo/mksparse).
			byFile = strings.ReplaceAll(byFile, raw, "demo")
			byName = strings.NewReplacer("demo.img", "demo", raw, "demo", "(android-sparse, ", "(raw, ").Replace(byName)
			if byName != byFile {
				t.Errorf("zrviz %s on \"demo\" printed\n%s\nand on the demo's bytes as a file\n%s", c.name, byName, byFile)
			}
		})
	}
	t.Run("serve", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--quiet", "demo"}, pw, io.Discard)
			pw.Close()
		}()
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err != nil {
			t.Fatalf("zrviz serve demo printed nothing: %v (returned %v)", err, <-done)
		}
		go io.Copy(io.Discard, pr)
		// The demo, which every server serves, named once more: served once.
		if !strings.Contains(line, "serving 1 image ") {
			t.Errorf("zrviz serve demo: %q, want the demo served once", line)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

// TestImageErrorsSayWhatAndWhere: the line main prints for an empty or a truncated image says
// what is wrong and where, in words, with the typed error beneath it.
func TestImageErrorsSayWhatAndWhere(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.img")
	if err := os.WriteFile(empty, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(testutil.DemoImage(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cut := filepath.Join(dir, "cut.img")
	dst, err := os.Create(cut)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(dst, src, 48<<20); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = runMain(t, "inspect", "--image", empty)
	if want := "zrviz: " + empty + ": imgio: the input is empty (0 bytes)"; !errors.Is(err, imgio.ErrEmpty) || "zrviz: "+err.Error() != want {
		t.Errorf("empty image: %v, want ErrEmpty and the line %q", err, want)
	}
	_, err = runMain(t, "map", "--image", cut, "/seed/bench64.bin")
	var te *imgio.TruncatedError
	want := "zrviz: " + cut + ": imgio: truncated image: it ends at byte 50,331,648, inside the main area (bytes 16,777,216 to 268,435,456); " +
		"the superblock's block_count (65,536 blocks of 4,096 bytes) needs bytes up to 268,435,456"
	if !errors.As(err, &te) || "zrviz: "+err.Error() != want {
		t.Errorf("truncated image: %v, want a *imgio.TruncatedError and the line %q", err, want)
	}
}
