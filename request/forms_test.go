package request

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sample is a value for a form's placeholder that ParseOp takes.
func sample(name string) string {
	switch name {
	case "PATH":
		return "/cases/holes.bin"
	case "OFFSET":
		return "4096"
	case "LENGTH":
		return "0x2000"
	}
	return "16"
}

// lines writes every line form f can make: each optional word present and absent, each choice
// of a keyword.
func lines(f Form) []string {
	out := []string{f.Kind}
	for _, a := range f.Args {
		var next []string
		words := a.Words
		if a.Name != "" {
			words = []string{sample(a.Name)}
		}
		for _, l := range out {
			if a.Optional {
				next = append(next, l)
			}
			for _, w := range words {
				next = append(next, l+" "+w)
			}
		}
		out = next
	}
	return out
}

// TestForms: every line a form can make is an operation of its kind; a form with a required word
// left out is refused; the forms name every kind ParseOp takes (each a kernel fixture's ops uses,
// too).
func TestForms(t *testing.T) {
	forms := Forms()
	kinds := map[string]bool{}
	for _, f := range forms {
		if kinds[f.Kind] {
			t.Errorf("kind %q has two forms", f.Kind)
		}
		kinds[f.Kind] = true
		for _, l := range lines(f) {
			op, err := ParseOp(l)
			if err != nil {
				t.Errorf("form %q: line %q: %v", f.Line, l, err)
				continue
			}
			if op.Kind != f.Kind {
				t.Errorf("line %q parses as %q, want %q", l, op.Kind, f.Kind)
			}
		}
		for i, a := range f.Args {
			if a.Optional {
				continue
			}
			// The fullest line without word i.
			full := lines(f)
			w := strings.Fields(full[len(full)-1])
			short := strings.Join(slices.Delete(w, i+1, i+2), " ")
			if _, err := ParseOp(short); err == nil {
				t.Errorf("form %q: %q (word %d left out) parses", f.Line, short, i+1)
			}
		}
	}
	for _, k := range []string{OpZero, OpWrite, OpFsync, OpSync, OpTune} {
		if !kinds[k] {
			t.Errorf("no form for %q", k)
		}
	}
	// Every operation of the kernel-written sequences has a form (the model's ops where the
	// oracle's hold lines for its guest only: model.ops).
	files, _ := filepath.Glob("../core/testdata/kernel-seq/*/ops")
	if len(files) == 0 {
		t.Fatal("no kernel-seq ops files")
	}
	for _, name := range files {
		if m := filepath.Join(filepath.Dir(name), "model.ops"); fileExists(m) {
			name = m
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := ParseOps(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, op := range ops {
			if !kinds[op.Kind] {
				t.Errorf("%s: operation %q has no form", name, op.Kind)
			}
		}
	}
	// A choice of digits is keywords, not a placeholder (as f17's "gc 1|0" writes it).
	for _, f := range forms {
		switch f.Kind {
		case OpGC:
			if a := f.Args[0]; f.Line != "gc 1|0" || a.Name != "" || len(a.Words) != 2 || a.Words[1] != "0" {
				t.Errorf("gc's form: %+v", f)
			}
		case OpNow:
			if a := f.Args[0]; f.Line != "now SECONDS" || a.Name != "SECONDS" {
				t.Errorf("now's form: %+v", f)
			}
		}
	}
	if f := forms[0]; f.Kind != OpZero || len(f.Args) != 4 || f.Args[0].Name != "PATH" || !f.Args[3].Optional || f.Args[3].Words[0] != "keep_size" {
		t.Errorf("zero's form: %+v", f)
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
