! Fortran round trip through fzpack's PERNIX C ABI: f32 and f64, 16 bits, 3 blocks of 64 bytes.
program pernix_roundtrip
  use, intrinsic :: iso_c_binding
  use pernix
  implicit none
  integer(c_int8_t), parameter :: bits = 16
  integer(c_int32_t), parameter :: bs = 64, nblocks = 3
  integer, parameter :: n = 32 * 3
  real(c_float) :: x(n), y(n), s, inv
  real(c_double) :: xd(n), yd(n), sd, invd
  integer(c_int8_t) :: packed(bs * nblocks)
  type(c_ptr) :: d
  integer :: i

  do i = 1, n
    x(i) = sin(real(i, c_float) * 0.25_c_float)
    xd(i) = cos(real(i, c_double) * 0.125_c_double)
  end do
  if (pernix_dispatcher_create(PERNIX_BACKEND_AUTO, d) /= PERNIX_STATUS_OK) stop 2
  if (pernix_scale_f32(1.0_c_float, bits, s) /= PERNIX_STATUS_OK) stop 3
  if (pernix_inverse_scale_f32(s, inv) /= PERNIX_STATUS_OK) stop 3
  if (pernix_compress_blocks_f32(d, bits, bs, x, inv, packed, nblocks) /= PERNIX_STATUS_OK) stop 4
  if (pernix_decompress_blocks_f32(d, bits, bs, packed, s, y, nblocks, .true._c_bool) /= PERNIX_STATUS_OK) stop 5
  if (maxval(abs(x - y)) > 0.5001 * s) stop 6
  if (pernix_scale_f64(1.0_c_double, bits, sd) /= PERNIX_STATUS_OK) stop 7
  if (pernix_inverse_scale_f64(sd, invd) /= PERNIX_STATUS_OK) stop 7
  if (pernix_compress_block_f64(d, bits, bs, xd, invd, packed) /= PERNIX_STATUS_OK) stop 8
  if (pernix_decompress_block_f64(d, bits, bs, packed, sd, yd, .true._c_bool) /= PERNIX_STATUS_OK) stop 9
  if (maxval(abs(xd(1:32) - yd(1:32))) > 0.5001d0 * sd) stop 10
  if (pernix_compress_block_f32(d, 25_c_int8_t, bs, x, inv, packed) /= PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH) stop 11
  call pernix_dispatcher_destroy(d)
  print '(a, es10.3, a, es10.3)', 'fortran round trip ok: max error f32 ', maxval(abs(x - y)), &
    ', f64 ', maxval(abs(xd(1:32) - yd(1:32)))
end program pernix_roundtrip
