package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/sandbox"
)

func cmdSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sandbox", "sandbox [--mode per-block|batched|both] [--json] 'SLOTS'", stderr)
	asJSON := fs.Bool("json", false, "print JSON: {\"slots\",\"path\",\"offset\",\"length\",\"keepSize\",\"layout\",\"results\":[...]}, one result per mode")
	mode := fs.String("mode", "both", "`MODE`: per-block (upstream), batched (the patch) or both")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: zrviz sandbox [--mode per-block|batched|both] [--json] 'SLOTS'\n\n%s\nFlags:\n", sandboxHelp)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{"sandbox takes a slot list, e.g. zrviz sandbox '7200-7263 NEW*3 7264 | 9000' (see zrviz sandbox --help)"}
	}
	modes, err := request.ParseModes(*mode)
	if err != nil {
		return flagError(err)
	}
	// The list may come as one quoted argument or as several words.
	l, err := sandbox.Parse(strings.Join(fs.Args(), " "))
	if err != nil {
		return usageError{err.Error()}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	out, err := sandbox.Simulate(l, modes)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeSandboxJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "slots: %s\n", shorten(out.Slots, 200))
	fmt.Fprintf(stdout, "%s slots (%s addresses, %s NEW, %s NULL) laid out from file block %s",
		units.Group(l.Len()), units.Group(l.Count(sandbox.Addr)), units.Group(l.Count(sandbox.New)),
		units.Group(l.Count(sandbox.Null)), units.Group(out.Layout[0].Index))
	pad := uint64(0)
	for _, g := range out.Layout {
		pad += g.Pad
	}
	if len(out.Layout) > 1 {
		fmt.Fprintf(stdout, "; %d groups, each after | at a dnode start (%s NEW padding slots)", len(out.Layout), units.Group(pad))
	}
	fmt.Fprint(stdout, "\n")
	run := runOutput{Path: out.Path, Offset: out.Offset, Length: out.Length, Results: out.Results}
	return writeRunText(stdout, run, l.Input().Inode.Size)
}

// writeSandboxJSON writes out as json.Encoder would, but streams each result's call list instead of
// building it in memory: a per-block run over 10 M slots makes 10 M calls, 130 MB of JSON that
// encoding/json would hold several times over.
func writeSandboxJSON(w io.Writer, out *sandbox.Output) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	head := *out
	head.Results = []*core.Result{}
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	b = bytes.TrimSuffix(b, []byte("]}")) // ends with "results":[]}
	bw.Write(b)
	for i, r := range out.Results {
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := r.WriteJSON(bw, nil); err != nil { // the one encoder of a result
			return err
		}
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// shorten cuts s to at most n bytes with an ellipsis (the canonical list is ASCII).
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

const sandboxHelp = `Runs the zero-range engine on a slot list typed by hand, in a synthetic file and volume.
Tokens, separated by spaces:
  7200        a block address (decimal)
  7200-7263   the contiguous addresses 7200..7263 inclusive
  NEW         NEW_ADDR (reserved, never written)     NULL   a hole
  NEW*3       K repeats of NEW or NULL
  |           a dnode boundary: the next slot starts a new dnode chunk
Example: zrviz sandbox '34304-34815 NEW*3 34816 | 6144-6200 NULL 9000'
The main area starts at block 4096 (lower addresses fail the bounds check); every listed address
is valid in the SIT, once (a repeated address fails the SIT check); inodes hold 873 slots, direct
nodes 1018. Without | the list starts at file block 0; see the README for the layout with |.
`
