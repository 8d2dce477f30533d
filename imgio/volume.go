package imgio

import "github.com/zrviz/zrviz/internal/f2fs"

// Volume holds the superblock and live-checkpoint facts of an image, decoded at open.
type Volume struct {
	BlockSize        uint32 `json:"blockSize"`
	BlockCount       uint64 `json:"blockCount"`
	SegmentCount     uint32 `json:"segmentCount"`
	MainSegmentCount uint32 `json:"mainSegmentCount"`
	SectionCount     uint32 `json:"sectionCount"`
	SegsPerSec       uint32 `json:"segsPerSec"`
	SecsPerZone      uint32 `json:"secsPerZone"`
	BlocksPerSeg     uint32 `json:"blocksPerSeg"`

	Segment0Blkaddr uint32 `json:"segment0Blkaddr"`
	CPBlkaddr       uint32 `json:"cpBlkaddr"`
	SITBlkaddr      uint32 `json:"sitBlkaddr"`
	NATBlkaddr      uint32 `json:"natBlkaddr"`
	SSABlkaddr      uint32 `json:"ssaBlkaddr"`
	MainBlkaddr     uint32 `json:"mainBlkaddr"`
	MaxBlkaddr      uint32 `json:"maxBlkaddr"` // segment0 + segment_count·512: end of the main area's address space
	RootIno         uint32 `json:"rootIno"`

	CheckpointVersion    uint64 `json:"checkpointVersion"`
	CheckpointPack       int    `json:"checkpointPack"` // 1 or 2
	CheckpointFlags      uint32 `json:"checkpointFlags"`
	UserBlockCount       uint64 `json:"userBlockCount"`
	ValidBlockCount      uint64 `json:"validBlockCount"`
	ValidNodeCount       uint32 `json:"validNodeCount"`
	ValidInodeCount      uint32 `json:"validInodeCount"`
	FreeSegmentCount     uint32 `json:"freeSegmentCount"`
	RsvdSegmentCount     uint32 `json:"rsvdSegmentCount"`
	OverprovSegmentCount uint32 `json:"overprovSegmentCount"`
	ElapsedTime          uint64 `json:"elapsedTime"`

	FeatureBits     uint32           `json:"featureBits"`
	Features        []string         `json:"features"`
	CurrentSegments []CurrentSegment `json:"currentSegments"`
	UUID            string           `json:"uuid"`
	VolumeName      string           `json:"volumeName"`
	Version         string           `json:"version"`
	// InitVersion is the superblock's init_version: the uname of the host where mkfs.f2fs made the
	// volume (Version is where f2fs-tools last wrote the superblock: mkfs, or a later fsck). Neither
	// names the kernel that wrote the files: the image does not record it.
	InitVersion string   `json:"initVersion"`
	Errors      [16]byte `json:"errors"` // s_errors, LSB-first bitmap
}

// CurrentSegment is one active log of the checkpoint (cur_data_segno / cur_node_segno).
type CurrentSegment struct {
	Type   string `json:"type"` // "hot-data", "warm-data", "cold-data", "hot-node", "warm-node", "cold-node"
	Log    int    `json:"log"`  // 0..5, the kernel's CURSEG_* number
	Segno  uint32 `json:"segno"`
	Blkoff uint16 `json:"blkoff"` // next free block in the segment
}

func (img *Image) makeVolume() Volume {
	s, c := &img.sb.raw, &img.cp.raw
	v := Volume{
		BlockSize: img.bs, BlockCount: s.BlockCount, SegmentCount: s.SegmentCount,
		MainSegmentCount: s.SegmentCountMain, SectionCount: s.SectionCount, SegsPerSec: s.SegsPerSec,
		SecsPerZone: s.SecsPerZone, BlocksPerSeg: blocksPerSeg,
		Segment0Blkaddr: s.Segment0Blkaddr, CPBlkaddr: s.CPBlkaddr, SITBlkaddr: s.SITBlkaddr,
		NATBlkaddr: s.NATBlkaddr, SSABlkaddr: s.SSABlkaddr, MainBlkaddr: s.MainBlkaddr,
		MaxBlkaddr: img.sb.maxBlk, RootIno: s.RootIno,
		CheckpointVersion: c.CheckpointVer, CheckpointPack: img.cp.pack, CheckpointFlags: c.CkptFlags,
		UserBlockCount: c.UserBlockCount, ValidBlockCount: c.ValidBlockCount,
		ValidNodeCount: c.ValidNodeCount, ValidInodeCount: c.ValidInodeCount,
		FreeSegmentCount: c.FreeSegmentCount, RsvdSegmentCount: c.RsvdSegmentCount,
		OverprovSegmentCount: c.OverprovSegmentCount, ElapsedTime: c.ElapsedTime,
		FeatureBits: s.Feature, Features: featureList(s.Feature),
		UUID: formatUUID(s.UUID), VolumeName: volumeName(s.VolumeName[:]), Version: cString(s.Version[:]), InitVersion: cString(s.InitVersion[:]),
		Errors: s.SErrors,
	}
	for t := range 3 {
		v.CurrentSegments = append(v.CurrentSegments, CurrentSegment{Type: f2fs.LogName(t), Log: t, Segno: c.CurDataSegno[t], Blkoff: c.CurDataBlkoff[t]})
	}
	for t := range 3 {
		v.CurrentSegments = append(v.CurrentSegments, CurrentSegment{Type: f2fs.LogName(3 + t), Log: 3 + t, Segno: c.CurNodeSegno[t], Blkoff: c.CurNodeBlkoff[t]})
	}
	return v
}
