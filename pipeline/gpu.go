package pipeline

import "errors"

// openGPU opens the GPU engine. The GPU engine is not part of this build yet.
func openGPU() (Engine, error) {
	return nil, errors.New("the GPU engine is not built into this binary yet")
}

// GPUStatus reports whether the GPU engine can run here.
func GPUStatus() EngineStatus {
	_, err := openGPU()
	return EngineStatus{Name: "gpu", Available: err == nil, Reason: errString(err)}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
