package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/zrviz/zrviz/imgdiff"
	"github.com/zrviz/zrviz/internal/units"
)

const diffSynopsis = `diff [--json] [--limit N] [--page P] A B`

const diffExitStatus = `
Exit status: 0 when the images were compared (whether or not they differ); 2 for a usage error or
images of different filesystems (another UUID or block count); 1 for an unreadable image.
`

// unrelatedError is two images of different filesystems; main exits with status 2.
type unrelatedError struct{ err error }

func (e unrelatedError) Error() string { return e.err.Error() }
func (e unrelatedError) Unwrap() error { return e.err }

// ExitCode is main's exit status for it.
func (unrelatedError) ExitCode() int { return 2 }

func cmdDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("diff", diffSynopsis, stderr)
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(stderr, diffExitStatus) }
	asJSON := fs.Bool("json", false, `print JSON: {"a","b","checkpoint","segments","nat","nodes","inodes","dirents","owners","problems"} (every change, unless --limit)`)
	limit := fs.Int("limit", 40, "`N` changes a listing shows at a time (0: all)")
	page := fs.Int("page", 0, "show page `P` (from 0) of every listing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError{fmt.Sprintf("diff takes two images A and B (got %d arguments), e.g. zrviz diff before.img after.img", fs.NArg())}
	}
	if *limit < 0 || *page < 0 {
		return usageError{"--limit and --page are 0 or more"}
	}
	a, err := openImage(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := openImage(ctx, fs.Arg(1))
	if err != nil {
		return err
	}
	defer b.Close()
	d, err := imgdiff.Compare(ctx, a, b)
	if errors.Is(err, imgdiff.ErrUnrelated) {
		return unrelatedError{fmt.Errorf("%s and %s: %w", fs.Arg(0), fs.Arg(1), err)}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		lim := 0
		if isSet(fs, "limit") {
			lim = *limit
		}
		return json.NewEncoder(stdout).Encode(pageDiff(d, *page, lim))
	}
	return writeDiffText(stdout, d, *page, *limit)
}

// pageDiff keeps page p of every listing.
func pageDiff(d *imgdiff.Diff, p, per int) *imgdiff.Diff {
	if per <= 0 {
		return d
	}
	out := *d
	out.Checkpoint, _ = imgdiff.Page(d.Checkpoint, p, per)
	out.Segments, _ = imgdiff.Page(d.Segments, p, per)
	out.NAT, _ = imgdiff.Page(d.NAT, p, per)
	out.Nodes, _ = imgdiff.Page(d.Nodes, p, per)
	out.Inodes, _ = imgdiff.Page(d.Inodes, p, per)
	out.Dirents, _ = imgdiff.Page(d.Dirents, p, per)
	out.Owners, _ = imgdiff.Page(d.Owners, p, per)
	return &out
}

func writeDiffText(w io.Writer, d *imgdiff.Diff, p, per int) error {
	fmt.Fprintf(w, "A: %s (%s, checkpoint %d, pack %d)\nB: %s (%s, checkpoint %d, pack %d)\n", d.A.Name, d.A.Format,
		d.A.CheckpointVersion, d.A.Pack, d.B.Name, d.B.Format, d.B.CheckpointVersion, d.B.Pack)
	if d.Empty() {
		fmt.Fprintln(w, "\nNo difference in the checkpoint, SIT, NAT or node blocks.")
	}
	section := func(title string, n int, rows func(lo, hi int)) {
		if n == 0 {
			return
		}
		lo, hi := 0, n
		if per > 0 {
			lo, hi = min(p*per, n), min(p*per+per, n)
		}
		fmt.Fprintf(w, "\n%s (%s):\n", title, units.Group(n))
		rows(lo, hi)
		if hi < n {
			fmt.Fprintf(w, "  … %s more (--page %d)\n", units.Group(n-hi), p+1)
		}
	}
	op := func(o imgdiff.Op) string {
		if o == imgdiff.OpNone {
			return ""
		}
		return fmt.Sprintf("   [%s: %s]", o, o.Func())
	}
	section("checkpoint fields", len(d.Checkpoint), func(lo, hi int) {
		for _, f := range d.Checkpoint[lo:hi] {
			fmt.Fprintf(w, "  %-28s %s → %s\n", f.Name, f.A, f.B)
		}
	})
	section("SIT entries", len(d.Segments), func(lo, hi int) {
		for _, s := range d.Segments[lo:hi] {
			fmt.Fprintf(w, "  segment %d: valid %d → %d, %s → %s", s.Segno, s.ValidA, s.ValidB, s.StateA, s.StateB)
			if s.TypeA != s.TypeB {
				fmt.Fprintf(w, ", type %d → %d", s.TypeA, s.TypeB)
			}
			fmt.Fprintln(w, op(s.Op))
			bitsLine(w, "set", s.FirstBlock, s.Set, s.SetOps)
			bitsLine(w, "cleared", s.FirstBlock, s.Cleared, s.ClearedOps)
		}
	})
	section("NAT entries", len(d.NAT), func(lo, hi int) {
		for _, n := range d.NAT[lo:hi] {
			fmt.Fprintf(w, "  nid %d (ino %d): block %s → %s%s\n", n.Nid, n.InoB, imgdiff.AddrWord(n.AddrA), imgdiff.AddrWord(n.AddrB), op(n.Op))
		}
	})
	section("node blocks", len(d.Nodes), func(lo, hi int) {
		for _, n := range d.Nodes[lo:hi] {
			file := n.File
			if file == "" {
				file = "(path not confirmed)"
			}
			kind := n.Kind
			if n.Path != n.Kind {
				kind += " " + n.Path
			}
			fmt.Fprintf(w, "  %s of inode %d %s: block %s → %s, %s changed\n", kind, n.Ino, file,
				imgdiff.AddrWord(n.AddrA), imgdiff.AddrWord(n.AddrB), plural(len(n.Slots)+len(n.Nids), "slot"))
			slots, more := imgdiff.Page(n.Slots, 0, max(per, 0))
			for _, s := range slots {
				fmt.Fprintf(w, "    file block %d (%s): %s → %s%s\n", s.Index, s.Field, imgdiff.AddrWord(s.A), imgdiff.AddrWord(s.B), op(s.Op))
			}
			if more {
				fmt.Fprintf(w, "    … %s more slots (--json --limit 0 lists them all)\n", units.Group(len(n.Slots)-len(slots)))
			}
			for _, x := range n.Nids {
				fmt.Fprintf(w, "    %s: nid %d → %d\n", x.Field, x.A, x.B)
			}
		}
	})
	section("inodes", len(d.Inodes), func(lo, hi int) {
		for _, in := range d.Inodes[lo:hi] {
			fmt.Fprintf(w, "  inode %d %s:\n", in.Ino, in.File)
			for _, f := range in.Fields {
				fmt.Fprintf(w, "    %-20s %s → %s\n", f.Name, f.A, f.B)
			}
		}
	})
	section("directory entries", len(d.Dirents), func(lo, hi int) {
		for _, e := range d.Dirents[lo:hi] {
			sign := "-"
			if e.Added {
				sign = "+"
			}
			fmt.Fprintf(w, "  %s %s/%s (ino %d)\n", sign, strings.TrimSuffix(e.Dir, "/"), e.Name, e.Ino)
		}
	})
	section("data blocks whose owner changed", len(d.Owners), func(lo, hi int) {
		owner := func(o *imgdiff.Owner) string {
			if o == nil {
				return "none"
			}
			return fmt.Sprintf("%s block %d (ino %d)", o.File, o.Index, o.Ino)
		}
		for _, o := range d.Owners[lo:hi] {
			fmt.Fprintf(w, "  block %d: %s → %s\n", o.Addr, owner(o.A), owner(o.B))
		}
	})
	for _, pr := range d.Problems {
		fmt.Fprintf(w, "\nproblem: %s\n", pr)
	}
	return nil
}

// bitsLine lists SIT bits as block addresses, runs merged, with what explains them.
func bitsLine(w io.Writer, what string, first uint32, bits []uint16, ops []imgdiff.Op) {
	if len(bits) == 0 {
		return
	}
	var parts []string
	for i := 0; i < len(bits); {
		j := i
		for j+1 < len(bits) && bits[j+1] == bits[j]+1 && ops[j+1] == ops[i] {
			j++
		}
		s := fmt.Sprint(first + uint32(bits[i]))
		if j > i {
			s += fmt.Sprintf("–%d", first+uint32(bits[j]))
		}
		if ops[i] != imgdiff.OpNone {
			s += " " + string(ops[i])
		} else {
			s += " (unexplained)"
		}
		parts = append(parts, s)
		i = j + 1
		if len(parts) == 12 && i < len(bits) {
			parts = append(parts, fmt.Sprintf("… %s more", plural(len(bits)-i, "bit")))
			break
		}
	}
	fmt.Fprintf(w, "    %s %s: %s\n", what, plural(len(bits), "bit"), strings.Join(parts, ", "))
}

// isSet reports whether the flag was given.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
