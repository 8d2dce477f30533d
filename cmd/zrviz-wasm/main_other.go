//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main says how this command is built: it runs only as WebAssembly in a browser.
func main() {
	fmt.Fprintln(os.Stderr, "zrviz-wasm runs in a browser: build it with `zrviz site DIR` (GOOS=js GOARCH=wasm)")
	os.Exit(2)
}
