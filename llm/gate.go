package llm

import (
	"context"
	"errors"
)

// Gate admits each model call before it is sent: the spending budgets (package budget). It
// may name another model for the call (a cheaper one past a soft threshold) or refuse it (the
// cap reached); a refused call fails with ErrorKindSpendCap and nothing is sent.
type Gate interface {
	// Admit returns the model to call for a call of model charged to a, or an error when the
	// call must not be made.
	Admit(ctx context.Context, a Account, model string) (string, error)
}

// ErrSpendCap is what a Gate returns for a call its budget refuses.
var ErrSpendCap = errors.New("the daily spending cap is reached")

// admit asks the Gate (Options.Gate) about a call of model and returns the model to call.
func (c *Client) admit(ctx context.Context, op Op, model string) (string, error) {
	if c.opts.Gate == nil {
		return model, nil
	}
	m, err := c.opts.Gate.Admit(ctx, AccountFrom(ctx), model)
	if err != nil {
		c.metrics.observeCall(op, model, &APIError{Op: op, Model: model, Kind: ErrorKindSpendCap}, 0)
		return model, &APIError{Op: op, Model: model, Kind: ErrorKindSpendCap, Err: err}
	}
	return m, nil
}

// Spender is told the cost of every metered call (the budgets' ledger).
type Spender interface {
	// Spent records usd spent on a call of model charged to a.
	Spent(ctx context.Context, a Account, model string, usd float64)
}
