package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"
)

// checkpoint.shard takes "auto", "none" or a shape, in a file and through
// --set (bare words too); anything else names the key; the JSON a
// checkpoint keeps reads back the same, and the empty array of format 1
// and 2 checkpoints' configs reads as "none".
func TestShardValues(t *testing.T) {
	for _, c := range []struct {
		set  string
		want Shard
	}{
		{"", Shard{}},
		{"checkpoint.shard=auto", Shard{}},
		{`checkpoint.shard="none"`, Shard{None: true}},
		{"checkpoint.shard=none", Shard{None: true}},
		{"checkpoint.shard=[]", Shard{None: true}},
		{"checkpoint.shard=[32, 16]", Shard{Shape: []int{32, 16}}},
	} {
		var sets []string
		if c.set != "" {
			sets = append(sets, c.set)
		}
		cfg, err := Load("", sets)
		require.NoError(t, err, c.set)
		require.Equal(t, c.want.None, cfg.Checkpoint.Shard.None, c.set)
		require.Equal(t, len(c.want.Shape), len(cfg.Checkpoint.Shard.Shape), c.set)
		require.Equal(t, c.want.Auto(), cfg.Checkpoint.Shard.Auto(), c.set)

		data, err := json.Marshal(cfg.Checkpoint.Shard)
		require.NoError(t, err)
		var back Shard
		require.NoError(t, json.Unmarshal(data, &back))
		require.Equal(t, cfg.Checkpoint.Shard.String(), back.String(), "JSON %s", data)

		// The TOML a dry run prints reads back the same.
		var text strings.Builder
		require.NoError(t, toml.NewEncoder(&text).Encode(cfg.Checkpoint))
		require.Contains(t, text.String(), "shard = "+map[bool]string{true: `"`, false: "["}[len(c.want.Shape) == 0])
		var ck Checkpoint
		_, err = toml.Decode(text.String(), &ck)
		require.NoError(t, err, text.String())
		require.Equal(t, cfg.Checkpoint.Shard.String(), ck.Shard.String(), text.String())
	}
	var old Shard
	require.NoError(t, json.Unmarshal([]byte(`[]`), &old))
	require.True(t, old.None, "an old checkpoint's shard = [] is a file per chunk")

	for _, bad := range []string{"checkpoint.shard=sometimes", "checkpoint.shard=[1.5, 2]", "checkpoint.shard=true", "checkpoint.shard=[8, 8, 8]", "checkpoint.shard=[0, 8]"} {
		_, err := Load("", []string{bad})
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "checkpoint.shard", bad)
	}
	require.Error(t, json.Unmarshal([]byte(`"sometimes"`), &old))
}
