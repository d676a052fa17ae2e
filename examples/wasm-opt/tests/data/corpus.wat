;; Exercises every pass of the example and what they must leave alone: imports, a start
;; function, a table, a global holding a function reference, memory, blocks, loops and ifs.
(module
  (import "env" "tick" (func $tick (param i32) (result i32)))
  (memory 1)
  (global $counter (mut i32) (i32.const 3))
  (global $callback funcref (ref.func $via_global))
  (table 2 funcref)
  (elem (i32.const 0) $via_table $folds)
  (start $init)

  (func $init (global.set $counter (i32.const 9)))
  (func $via_table (param i32) (result i32) (i32.add (local.get 0) (i32.const 1)))
  (func $via_global (result i32) (i32.const 4))
  (func $dead_a (param i32) (result i32) (call $dead_b (local.get 0)))
  (func $dead_b (param i32) (result i32) (call $dead_a (local.get 0)))
  (func $helper (param i32) (result i32) (i32.mul (local.get 0) (i32.const 3)))
  (func $kept_by_config (result i32) (i32.const 42))

  (func $folds (export "folds") (param $x i32) (result i32)
    (i32.add
      (i32.mul (local.get $x) (i32.add (i32.const 2) (i32.const 3)))
      (i32.sub (i32.shl (i32.const 1) (i32.const 4)) (i32.const 6))))

  (func (export "folds64") (param $x i64) (result i64)
    (i64.xor (local.get $x) (i64.mul (i64.const 0x100000000) (i64.const 3))))

  (func (export "traps_kept") (param $x i32) (result i32)
    (i32.add (local.get $x) (i32.div_u (i32.const 1) (i32.const 0))))

  (func (export "strength") (param $x i32) (param $y i64) (result i64)
    (i64.add
      (i64.extend_i32_u
        (i32.add (i32.mul (local.get $x) (i32.const 16))
                 (i32.add (i32.div_u (local.get $x) (i32.const 8))
                          (i32.rem_u (local.get $x) (i32.const 4)))))
      (i64.mul (local.get $y) (i64.const 1024))))

  (func (export "signed_kept") (param $x i32) (result i32)
    (i32.add (i32.div_s (local.get $x) (i32.const 4)) (i32.rem_s (local.get $x) (i32.const 8))))

  (func (export "square") (param $x i32) (result i32)
    (i32.mul
      (i32.add (local.get $x) (global.get $counter))
      (i32.add (local.get $x) (global.get $counter))))

  (func (export "square64") (param $y i64) (result i64)
    (i64.mul (i64.sub (local.get $y) (i64.const 7)) (i64.sub (local.get $y) (i64.const 7))))

  (func (export "vacuum") (param $x i32) (result i32)
    (drop (i32.const 5))
    (drop (local.get $x))
    (drop (global.get $counter))
    (local.get $x))

  (func (export "nested") (param $n i32) (result i32)
    (local $acc i32)
    (block $done
      (loop $again
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc
          (i32.add (local.get $acc)
            (if (result i32) (i32.and (local.get $n) (i32.const 1))
              (then (i32.mul (local.get $n) (i32.add (i32.const 1) (i32.const 1))))
              (else (call $helper (local.get $n))))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $again)))
    (local.get $acc))

  (func (export "calls") (param $x i32) (result i32)
    (i32.add
      (call $tick (local.get $x))
      (i32.add
        (call_indirect (param i32) (result i32) (local.get $x) (i32.const 0))
        (global.get $counter))))

  (func (export "memory") (param $x i32) (result i32)
    (i32.store (i32.mul (i32.const 4) (i32.const 2)) (local.get $x))
    (i32.load (i32.const 8))))
