// gemm_mac: one row of COLS cells of gemm_tile's systolic array (gemm_tile.sv describes the
// array). Each cell passes its operands on after one cycle (A to the right, B down) and adds
// their product to the output it holds; `shift` loads the row below's outputs instead (the
// array drains upwards). Lane j of a packed port belongs to cell j.
module gemm_mac #(
    parameter int COLS = 4,
    parameter int DW = 8,
    parameter int AW = 32
) (
    input  logic                 clk,
    input  logic                 clear,
    input  logic                 shift,
    input  logic [DW-1:0]        a_left,     // A entering cell 0
    input  logic [COLS*DW-1:0]   b_in,       // B entering each cell from above
    output logic [COLS*DW-1:0]   b_out,      // B leaving each cell downwards, one cycle later
    input  logic [COLS*AW-1:0]   acc_below,  // the outputs of the row below
    output logic [COLS*AW-1:0]   acc
);
    // a_in lane j: the A operand entering cell j; cell j's output register is lane j + 1.
    logic [COLS*DW-1:0] a_in;
    genvar j;
    generate
        if (COLS == 1) begin : g_one
            assign a_in = a_left;
        end else begin : g_more
            logic [(COLS-1)*DW-1:0] a_out;  // the rightmost cell's A output goes nowhere
            always_ff @(posedge clk) a_out <= a_in[(COLS-1)*DW-1:0];
            assign a_in = {a_out, a_left};
        end
        // One register per cell: the simulator updates it in place (a packed row register
        // would be copied whole every cycle).
        for (j = 0; j < COLS; j++) begin : g_cell
            logic [AW-1:0] sum;
            always_ff @(posedge clk) begin
                if (clear)
                    sum <= '0;
                else if (shift)
                    sum <= acc_below[j*AW +: AW];
                else
                    sum <= sum + AW'($signed(a_in[j*DW +: DW]) * $signed(b_in[j*DW +: DW]));
            end
            assign acc[j*AW +: AW] = sum;
        end
    endgenerate

    always_ff @(posedge clk) b_out <= b_in;
endmodule
