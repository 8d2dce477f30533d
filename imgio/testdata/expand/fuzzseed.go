//go:build ignore

// fuzzseed writes each file named on the command line as a seed of FuzzExpand, in the corpus format
// of `go test -fuzz`, under ../fuzz/FuzzExpand/, named after the file. Run by mkfuzzseeds.sh.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	out := filepath.Join("..", "fuzz", "FuzzExpand")
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, name := range os.Args[1:] {
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		seed := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		if err := os.WriteFile(filepath.Join(out, filepath.Base(name)), []byte(seed), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
