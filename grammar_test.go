package zrviz_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/request"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the README's ops grammar table from request.Ops")

// grammarTable is the ops language as the README's Markdown table: each operation's form, what it
// is and the kernel entry point it models, read from its one declaration (request.Ops).
func grammarTable() string {
	var b strings.Builder
	b.WriteString("| operation | what it is | kernel entry point |\n|---|---|---|\n")
	for _, s := range request.Ops() {
		cell := func(x string) string { return strings.ReplaceAll(x, "|", `\|`) } // a pipe ends a cell, even in code
		fmt.Fprintf(&b, "| `%s` | %s | `%s` |\n", cell(s.Form()), cell(s.Help), s.Kernel)
	}
	return b.String()
}

// TestREADMEGrammar: the README's grammar table is the registry's (go test -run TestREADMEGrammar
// -update-readme . rewrites it), so the README lists every operation the parser takes.
func TestREADMEGrammar(t *testing.T) {
	const open, end = "<!-- ops-grammar: generated from request.Ops; grammar_test.go TestREADMEGrammar holds it -->\n", "<!-- /ops-grammar -->"
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, open), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no ops grammar block (%q … %q)", open, end)
	}
	got, want := s[i+len(open):j], grammarTable()
	if got == want {
		return
	}
	if *updateREADME {
		if err := os.WriteFile("README.md", []byte(s[:i+len(open)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's ops grammar table differs from request.Ops; run go test -run TestREADMEGrammar -update-readme .\ngot:\n%s\nwant:\n%s", got, want)
}
