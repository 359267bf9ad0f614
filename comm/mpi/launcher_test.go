package mpi

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// clearLauncherEnv unsets every variable LauncherSize reads, restoring them
// when the test ends (the MPI build runs its tests under mpirun).
func clearLauncherEnv(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS"} {
		t.Setenv(v, "")
		require.NoError(t, os.Unsetenv(v))
	}
}

func TestLauncherSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		n    int
		src  string
	}{
		{"none", nil, 0, ""},
		{"openmpi", map[string]string{"OMPI_COMM_WORLD_SIZE": "4"}, 4, "OMPI_COMM_WORLD_SIZE=4"},
		{"pmi", map[string]string{"PMI_SIZE": "3"}, 3, "PMI_SIZE=3"},
		{"openmpi-first", map[string]string{"OMPI_COMM_WORLD_SIZE": "4", "PMI_SIZE": "3"}, 4, "OMPI_COMM_WORLD_SIZE=4"},
		{"garbage-skipped", map[string]string{"OMPI_COMM_WORLD_SIZE": "four", "PMI_SIZE": "2"}, 2, "PMI_SIZE=2"},
		{"zero-skipped", map[string]string{"OMPI_COMM_WORLD_SIZE": "0"}, 0, ""},
		{"slurm-outside-a-step", map[string]string{"SLURM_STEP_NUM_TASKS": "8"}, 0, ""},
		{"slurm-step", map[string]string{"SLURM_STEP_NUM_TASKS": "8", "SLURM_PROCID": "0"}, 8, "SLURM_STEP_NUM_TASKS=8"},
		{"mpirun-in-a-batch-step", map[string]string{"SLURM_STEP_NUM_TASKS": "1", "SLURM_PROCID": "0", "OMPI_COMM_WORLD_SIZE": "16"}, 16, "OMPI_COMM_WORLD_SIZE=16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearLauncherEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			n, src := LauncherSize()
			require.Equal(t, tc.n, n)
			require.Equal(t, tc.src, src)
		})
	}
}
