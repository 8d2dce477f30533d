package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/zrviz/zrviz/imgio"
)

// parseAddr reads a block address: decimal, or hex with a 0x prefix.
func parseAddr(s string) (uint32, error) {
	base, digits := 10, s
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		base, digits = 16, s[2:]
	}
	v, err := strconv.ParseUint(digits, base, 32)
	if err != nil || digits == "" {
		return 0, fmt.Errorf("%q is not a block address (decimal, or hex with 0x; at most 0xffffffff)", s)
	}
	return uint32(v), nil
}

func cmdBlock(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("block", "block [--image IMG] [--json] [--hex] ADDR", stderr)
	image := imageFlag(fs)
	asJSON := fs.Bool("json", false, `print JSON: {"addr","area","kind","segno","valid","owner","ssa","fields","links","problems"}`)
	withHex := fs.Bool("hex", false, "also print the block's bytes as a hex dump (text form only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"block takes exactly one block ADDR (decimal or 0x hex), e.g. zrviz block 22528"}
	}
	addr, err := parseAddr(fs.Arg(0))
	if err != nil {
		return usageError{err.Error()}
	}
	img, err := openImage(ctx, *image)
	if err != nil {
		return err
	}
	defer img.Close()
	b, err := img.Block(ctx, addr)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, b)
	}
	return writeBlockText(stdout, b, *withHex)
}

// writeBlockText prints what a block is, who owns it, what disagrees, then its fields and links.
func writeBlockText(w io.Writer, b imgio.BlockInfo, withHex bool) error {
	fmt.Fprintf(w, "block %d (%#x)  %s area", b.Addr, b.Addr, b.Area)
	if b.Segno != nil {
		fmt.Fprintf(w, ", segment %d", *b.Segno)
	}
	if b.Valid != nil {
		fmt.Fprintf(w, ", SIT bit %s", map[bool]string{true: "set (valid)", false: "clear"}[*b.Valid])
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kind\t%s\n", b.Kind)
	for _, f := range b.Fields {
		if f.Name == "role" {
			fmt.Fprintf(tw, "role\t%s\n", f.Value)
		}
	}
	if o := b.Owner; o != nil {
		path := o.DisplayPath()
		switch {
		case o.Index != nil:
			fmt.Fprintf(tw, "owner\t%s  inode %d, file block %d\n", path, o.Ino, *o.Index)
		case o.Nid != nil:
			fmt.Fprintf(tw, "owner\t%s  inode %d, node %d\n", path, o.Ino, *o.Nid)
		}
	}
	if s := b.SSA; s != nil {
		where := fmt.Sprintf("%s block %d, byte %d", s.Source, s.Blkaddr, s.Offset)
		if s.Source == "none" {
			where = "none stored: past the current segment's next free block"
		}
		fmt.Fprintf(tw, "summary\tnid %d, ofs_in_node %d, version %d  (%s)\n", s.Nid, s.OfsInNode, s.Version, where)
	}
	if len(b.Problems) == 0 {
		fmt.Fprintf(tw, "problems\tnone\n")
	}
	tw.Flush()
	for _, p := range b.Problems {
		var offs []string
		for _, o := range p.Offsets {
			offs = append(offs, fmt.Sprintf("%#x", o))
		}
		fmt.Fprintf(w, "PROBLEM: %s  [bytes %s]\n", p.Message, strings.Join(offs, ", "))
	}
	if n := len(b.Fields); n > 0 && !(n == 1 && b.Fields[0].Name == "role") {
		fmt.Fprintln(w, "\nfields")
		width := 4
		for _, f := range b.Fields {
			width = max(width, min(len(f.Name), 32))
		}
		fmt.Fprintf(w, "  %6s %5s  %-*s  %s\n", "offset", "size", width, "name", "value")
		for _, f := range b.Fields {
			if f.Name != "role" {
				fmt.Fprintf(w, "  %#6x %5d  %-*s  %s\n", f.Offset, f.Size, width, f.Name, f.Value)
			}
		}
	}
	if len(b.Links) > 0 {
		fmt.Fprintln(w, "\nlinks")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, l := range b.Links {
			fmt.Fprintf(tw, "  %s\t%d\n", l.Name, l.Addr)
		}
		tw.Flush()
	}
	if withHex && b.Data != nil {
		fmt.Fprintln(w)
		d := hex.Dumper(w)
		d.Write(b.Data)
		d.Close()
	}
	return nil
}
