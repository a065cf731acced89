package partition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

const logStartFile = "log-start-offset"

func readLogStart(dir string) (base.Offset, error) {
	data, err := os.ReadFile(filepath.Join(dir, logStartFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s in %s is corrupt: %q", logStartFile, dir, data)
	}
	return base.Offset(v), nil
}

func writeLogStart(dir string, o base.Offset) error {
	return vfs.WriteFileAtomic(dir, logStartFile, []byte(strconv.FormatInt(int64(o), 10)+"\n"))
}
