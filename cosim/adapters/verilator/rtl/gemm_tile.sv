// gemm_tile: an output-stationary systolic GEMM tile engine, C = A x B.
//
// Written for etsim's RTL co-simulation (docs/cosim-rtl.md);
// small and synthesizable in style: one clock, synchronous active-high reset, no latches,
// every array register written in one always_ff.
//
// Microarchitecture
// -----------------
// * ROWS x COLS multiply-accumulate cells (gemm_mac: one row of them). Cell (i,j) owns the
//   accumulator of C[i][j] of the current fold (output stationary, as the accelerator model's
//   "os" dataflow). A values enter at the left edge and move one cell right per cycle; B
//   values enter at the top and move one cell down per cycle.
// * A GEMM is cut into folds of at most ROWS x COLS outputs: row blocks (outer loop) times
//   column blocks (inner loop). Per fold the controller
//     FEED   K cycles: reads word k of the fold's A row block and B column block (both ports
//            together; one A word = ROWS operands, one B word = COLS operands);
//     WAIT   until the memory returned the K-th word (fixed latency L >= 1 cycles, set by the
//            memory, not by this block: responses are flagged by mem_rd_valid);
//     FLUSH  m_f + n_f - 1 cycles after the last word was captured, until cell
//            (m_f-1, n_f-1) - the last one holding a result of this fold - has added its
//            last product (skewed inputs: row i enters i cycles late, column j j cycles late);
//     DRAIN  m_f cycles: writes one row of the fold's outputs per cycle (COLS accumulators),
//            row 0 first, the rows below moving up one row per cycle.
//   m_f = min(ROWS, M - row offset), n_f = min(COLS, N - column offset).
// * Operand words are laid out by whoever fills the memory (the DMA in a real design):
//   A word at a_addr + rb*K + k holds A[rb*ROWS + i][k] in lane i, B word at
//   b_addr + cb*K + k holds B[k][cb*COLS + j] in lane j (zero beyond M or N). Result row r of
//   fold f (row-major over (rb, cb)) goes to c_addr + f*ROWS + r, lane j = column cb*COLS + j.
//
// Cycle formula (exact; tests/rtl check it): counting clock edges from the edge that accepts
// the command (cmd_valid && cmd_ready) to the edge after which `done` is high,
//
//     cycles = sum over folds f of (K + L + 2*m_f + n_f - 1)
//
// i.e. K + L + 2*ROWS + COLS - 1 per full fold; 0 for a GEMM with M, N or K zero. The
// SCALE-Sim formula of the accelerator model (2R + C + T - 2 per fold, 2M + N + K - 2 for one
// fold that fits) counts the same fill, stream and drain; this block adds L + 1 per fold (the
// memory latency and the capture register) and, unlike the model, runs edge folds at their
// real size.
module gemm_tile #(
    parameter int ROWS = 4,
    parameter int COLS = 4,
    parameter int DW = 8,    // operand width, signed
    parameter int AW = 32,   // accumulator width, signed
    parameter int ADDRW = 32 // word address width
) (
    input  logic                 clk,
    input  logic                 rst,
    // Command: valid/ready handshake; fields are sampled when both are high.
    input  logic                 cmd_valid,
    output logic                 cmd_ready,
    input  logic [31:0]          cmd_m,
    input  logic [31:0]          cmd_n,
    input  logic [31:0]          cmd_k,
    input  logic [ADDRW-1:0]     cmd_a_addr,
    input  logic [ADDRW-1:0]     cmd_b_addr,
    input  logic [ADDRW-1:0]     cmd_c_addr,
    output logic                 done,       // high for one cycle when the GEMM is complete
    // Operand reads: both ports issue together; data returns L cycles later with mem_rd_valid.
    output logic                 mem_rd_en,
    output logic [ADDRW-1:0]     mem_a_addr,
    output logic [ADDRW-1:0]     mem_b_addr,
    input  logic                 mem_rd_valid,
    input  logic [ROWS*DW-1:0]   mem_a_data,
    input  logic [COLS*DW-1:0]   mem_b_data,
    // Result writes: one row of a fold per cycle.
    output logic                 c_wr_en,
    output logic [ADDRW-1:0]     c_wr_addr,
    output logic [COLS*AW-1:0]   c_wr_data
);

    typedef enum logic [2:0] {IDLE, FEED, WAIT, FLUSH, DRAIN} state_t;
    state_t state;

    // Command and fold bookkeeping.
    logic [31:0]      m_r, n_r, k_r;
    logic [31:0]      m_off, n_off;      // first row / column of the current fold
    logic [ADDRW-1:0] b_base;
    logic [ADDRW-1:0] a_ptr, b_ptr;      // first word of the fold's A row block / B column block
    logic [ADDRW-1:0] c_ptr;             // first result word of the fold
    logic [31:0]      kk;                // words requested in this fold
    logic [31:0]      got;               // words received in this fold
    logic [31:0]      flush;
    logic [31:0]      drow;              // result row being written
    logic [31:0]      m_f, n_f;          // rows and columns of the current fold

    assign m_f = (m_r - m_off) < ROWS ? (m_r - m_off) : ROWS;
    assign n_f = (n_r - n_off) < COLS ? (n_r - n_off) : COLS;

    assign cmd_ready  = state == IDLE;
    assign mem_rd_en  = state == FEED;
    assign mem_a_addr = a_ptr + kk;
    assign mem_b_addr = b_ptr + kk;

    // Cleared at the start of each fold; the previous fold's rows were captured by then.
    logic clear;
    logic last_drain;
    assign last_drain = state == DRAIN && drow == m_f - 1;
    assign clear = (state == IDLE && cmd_valid) || last_drain;

    // ---- operand capture and skew -----------------------------------------------------------
    // Stage 0 captures the memory word (zero when no word arrives, so idle cycles add nothing);
    // row i then waits i more cycles and column j j more, so A[i][k] and B[k][j] meet in cell
    // (i, j) in the same cycle. Each lane's stages are one packed shift register: a few word
    // operations per cycle in simulation instead of one delayed copy per stage.
    logic [ROWS*DW-1:0] a_left;  // A operands entering column 0, lane i = row i
    logic [COLS*DW-1:0] b_top;   // B operands entering row 0, lane j = column j

    genvar i;
    generate
        for (i = 0; i < ROWS; i++) begin : g_askew
            logic [DW-1:0] word;
            logic [(i+1)*DW-1:0] stages;
            assign word = mem_rd_valid ? mem_a_data[i*DW +: DW] : '0;
            if (i == 0) begin : g_first
                always_ff @(posedge clk) stages <= word;
            end else begin : g_later
                always_ff @(posedge clk) stages <= {stages[i*DW-1:0], word};
            end
            assign a_left[i*DW +: DW] = stages[i*DW +: DW];
        end
        for (i = 0; i < COLS; i++) begin : g_bskew
            logic [DW-1:0] word;
            logic [(i+1)*DW-1:0] stages;
            assign word = mem_rd_valid ? mem_b_data[i*DW +: DW] : '0;
            if (i == 0) begin : g_first
                always_ff @(posedge clk) stages <= word;
            end else begin : g_later
                always_ff @(posedge clk) stages <= {stages[i*DW-1:0], word};
            end
            assign b_top[i*DW +: DW] = stages[i*DW +: DW];
        end
    endgenerate

    // ---- the array --------------------------------------------------------------------------
    // Row i of cells: b_in[i] lane j is the B operand entering cell (i, j) from above,
    // g_row[i].sums lane j its accumulator; A enters each row at its left edge (a_left lane i).
    // Operands move as whole rows (one packed vector per row) and each row's cells are one
    // gemm_mac, so the simulator updates a row with a few wide operations. DRAIN moves the
    // accumulators up one row per cycle and writes row 0: no row multiplexer. Only zero
    // operands are in the array during DRAIN (the fold's last product was added in FLUSH), so
    // skipping the add then changes nothing and rows reach row 0 unchanged.
    // b_in[ROWS] leaves the bottom row unread, like a_out of the rightmost column.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [COLS*DW-1:0] b_in [ROWS+1];
    /* verilator lint_on UNUSEDSIGNAL */
    logic shift;

    assign b_in[0] = b_top;
    assign shift = state == DRAIN;
    generate
        for (i = 0; i < ROWS; i++) begin : g_row
            // Whole-variable connections let the simulator share one copy of each row's
            // outputs between the row and the row above it.
            logic [COLS*AW-1:0] sums;
            logic [COLS*AW-1:0] below;
            if (i == ROWS - 1) begin : g_last
                assign below = '0;
            end else begin : g_inner
                assign below = g_row[i+1].sums;
            end
            gemm_mac #(.COLS(COLS), .DW(DW), .AW(AW)) cells (
                .clk(clk),
                .clear(clear),
                .shift(shift),
                .a_left(a_left[i*DW +: DW]),
                .b_in(b_in[i]),
                .b_out(b_in[i+1]),
                .acc_below(below),
                .acc(sums)
            );
        end
    endgenerate

    // ---- controller -------------------------------------------------------------------------
    always_ff @(posedge clk) begin
        if (rst) begin
            state   <= IDLE;
            done    <= 1'b0;
            c_wr_en <= 1'b0;
        end else begin
            done    <= 1'b0;
            c_wr_en <= 1'b0;
            if (state != IDLE && mem_rd_valid)
                got <= got + 1;
            case (state)
                IDLE: if (cmd_valid) begin
                    m_r    <= cmd_m;
                    n_r    <= cmd_n;
                    k_r    <= cmd_k;
                    m_off  <= 0;
                    n_off  <= 0;
                    a_ptr  <= cmd_a_addr;
                    b_ptr  <= cmd_b_addr;
                    b_base <= cmd_b_addr;
                    c_ptr  <= cmd_c_addr;
                    kk     <= 0;
                    got    <= 0;
                    // An empty GEMM completes at once.
                    if (cmd_m == 0 || cmd_n == 0 || cmd_k == 0)
                        done <= 1'b1;
                    else
                        state <= FEED;
                end
                FEED: begin
                    kk <= kk + 1;
                    if (kk == k_r - 1)
                        state <= WAIT;
                end
                WAIT: if (mem_rd_valid && got == k_r - 1) begin
                    flush <= m_f + n_f - 2;
                    state <= FLUSH;
                end
                FLUSH: begin
                    flush <= flush - 1;
                    if (flush == 0) begin
                        drow  <= 0;
                        state <= DRAIN;
                    end
                end
                DRAIN: begin
                    c_wr_en   <= 1'b1;
                    c_wr_addr <= c_ptr + drow;
                    c_wr_data <= g_row[0].sums;  // row drow, moved up drow times
                    drow      <= drow + 1;
                    if (last_drain) begin
                        kk    <= 0;
                        got   <= 0;
                        c_ptr <= c_ptr + ROWS;
                        if (n_off + COLS < n_r) begin
                            n_off <= n_off + COLS;
                            b_ptr <= b_ptr + k_r;
                            state <= FEED;
                        end else if (m_off + ROWS < m_r) begin
                            n_off <= 0;
                            m_off <= m_off + ROWS;
                            a_ptr <= a_ptr + k_r;
                            b_ptr <= b_base;
                            state <= FEED;
                        end else begin
                            done  <= 1'b1;
                            state <= IDLE;
                        end
                    end
                end
                default: state <= IDLE;
            endcase
        end
    end

endmodule
