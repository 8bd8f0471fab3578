// gemm_mac: one cell of gemm_tile's systolic array (gemm_tile.sv describes the array).
// Passes its operands on after one cycle and adds their product to the output it holds.
module gemm_mac #(
    parameter int DW = 8,
    parameter int AW = 32
) (
    input  logic                 clk,
    input  logic                 clear,
    input  logic signed [DW-1:0] a_in,
    input  logic signed [DW-1:0] b_in,
    output logic signed [DW-1:0] a_out,
    output logic signed [DW-1:0] b_out,
    output logic signed [AW-1:0] acc
);
    logic signed [2*DW-1:0] product;
    assign product = a_in * b_in;

    always_ff @(posedge clk) begin
        a_out <= a_in;
        b_out <= b_in;
        acc   <= clear ? '0 : acc + AW'(product);
    end
endmodule
