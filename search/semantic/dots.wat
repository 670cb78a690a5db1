;; Dot products of one query with every row of a matrix of float32 vectors (search/semantic/dots.ts):
;; the semantic arms' scan (search/semantic/lsa.ts nearestVectors), with 128-bit SIMD.
;;
;; dots(rows, query, n, dim, visible, out): for each row i < n, out[i] (float32) = the row's dot product
;; with the query when visible[i] (a byte) is 1, else 0. rows: n x dim float32, query: dim float32, all
;; byte offsets into this module's memory; dim a multiple of 4.
;;
;; The same value, to the bit, as nearestVectors's JavaScript loop: every component is widened to float64,
;; each product rounded to float64 and added into one of four float64 sums in the JavaScript's order
;; (component d into sum d mod 4; here sums 0 and 1 are the lanes of $lo, 2 and 3 of $hi), then
;; ((s0 + s1) + s2) + s3 rounded to float32.
(module
  (memory (export "memory") 1)
  (func (export "dots") (param $rows i32) (param $query i32) (param $n i32) (param $dim i32) (param $visible i32) (param $out i32)
    (local $i i32) (local $row i32) (local $d i32) (local $lo v128) (local $hi v128) (local $rowBytes i32)
    (local.set $rowBytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $row (local.get $rows))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.eq (i32.load8_u (i32.add (local.get $visible) (local.get $i))) (i32.const 1))
          (then
            (local.set $lo (f64x2.splat (f64.const 0)))
            (local.set $hi (f64x2.splat (f64.const 0)))
            (local.set $d (i32.const 0))
            (block $end
              (loop $components
                (br_if $end (i32.ge_u (local.get $d) (local.get $rowBytes)))
                (local.set $lo
                  (f64x2.add (local.get $lo)
                    (f64x2.mul
                      (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $row) (local.get $d))))
                      (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $query) (local.get $d)))))))
                (local.set $hi
                  (f64x2.add (local.get $hi)
                    (f64x2.mul
                      (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (i32.add (local.get $row) (local.get $d))))
                      (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (i32.add (local.get $query) (local.get $d)))))))
                (local.set $d (i32.add (local.get $d) (i32.const 16)))
                (br $components)))
            (f32.store
              (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
              (f32.demote_f64
                (f64.add
                  (f64.add
                    (f64.add (f64x2.extract_lane 0 (local.get $lo)) (f64x2.extract_lane 1 (local.get $lo)))
                    (f64x2.extract_lane 0 (local.get $hi)))
                  (f64x2.extract_lane 1 (local.get $hi))))))
          (else
            (f32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2))) (f32.const 0))))
        (local.set $row (i32.add (local.get $row) (local.get $rowBytes)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $each)))))
