package imgio

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"testing"
)

// TestTruncatedSaysWhereItEnds cuts a real image inside each of its areas: the error is a
// *TruncatedError naming where the image ends, the area cut and where the volume ends (the
// superblock's block_count × block size), and still a *FormatError on block_count.
func TestTruncatedSaysWhereItEnds(t *testing.T) {
	base, good := loadSparse(t, "testdata/basic.img.gz")
	v := good.Volume()
	sb := good.sb.raw
	bs := int64(v.BlockSize)
	need := int64(sb.BlockCount) * bs
	tests := []struct {
		size     int64
		area     string
		from, to int64 // block addresses
	}{
		{8 * bs, "the superblock area", 0, int64(sb.CPBlkaddr)},
		{int64(sb.CPBlkaddr+3) * bs, "the checkpoint area", int64(sb.CPBlkaddr), int64(sb.SITBlkaddr)},
		{int64(sb.SITBlkaddr+1) * bs, "the SIT", int64(sb.SITBlkaddr), int64(sb.NATBlkaddr)},
		{int64(sb.NATBlkaddr) * bs, "the NAT", int64(sb.NATBlkaddr), int64(sb.SSABlkaddr)},
		{int64(sb.SSABlkaddr+1)*bs + 7, "the SSA", int64(sb.SSABlkaddr), int64(sb.MainBlkaddr)},
		{need - bs, "the main area", int64(sb.MainBlkaddr), int64(sb.MainBlkaddr) + int64(sb.SegmentCountMain)<<9},
	}
	for _, tc := range tests {
		t.Run(tc.area, func(t *testing.T) {
			s := base.clone()
			s.r.size = tc.size
			_, err := s.open()
			var te *TruncatedError
			if !errors.As(err, &te) {
				t.Fatalf("cut at %d: %v, want a *TruncatedError", tc.size, err)
			}
			if te.Size != tc.size || te.Need != need || te.Area != tc.area || te.AreaFrom != tc.from*bs || te.AreaTo != tc.to*bs ||
				te.BlockCount != sb.BlockCount || te.BlockSize != v.BlockSize {
				t.Errorf("cut at %d: %+v, want it to end in %s [%d, %d), the volume at %d", tc.size, te, tc.area, tc.from*bs, tc.to*bs, need)
			}
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Off != 1024+0x24 {
				t.Errorf("cut at %d: %v does not locate block_count (a *FormatError at 0x424)", tc.size, err)
			}
		})
	}
}

// TestEmptyInput: no bytes at all is ErrEmpty (and ErrNotF2FS), raw or through expansion; a
// compressed stream of nothing is not an empty input.
func TestEmptyInput(t *testing.T) {
	if _, err := NewImage(bytes.NewReader(nil), 0); !errors.Is(err, ErrEmpty) || !errors.Is(err, ErrNotF2FS) {
		t.Errorf("NewImage of 0 bytes: %v, want ErrEmpty and ErrNotF2FS", err)
	}
	if _, _, err := ExpandContext(context.Background(), xDiscard{}, bytes.NewReader(nil), nil); !errors.Is(err, ErrEmpty) || !errors.Is(err, ErrNotF2FS) {
		t.Errorf("ExpandContext of 0 bytes: %v, want ErrEmpty and ErrNotF2FS", err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Close()
	_, _, err := ExpandContext(context.Background(), xDiscard{}, &gz, nil)
	if errors.Is(err, ErrEmpty) || !errors.Is(err, ErrNotF2FS) {
		t.Errorf("ExpandContext of an empty gzip stream: %v, want ErrNotF2FS, not ErrEmpty (the upload was not empty)", err)
	}
}
