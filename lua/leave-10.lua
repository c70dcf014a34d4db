--[[
  A student gives up their place in the pre-queue or the queue, and any unused ticket.

  KEYS[1] queue    sorted set: student -> join sequence number
  KEYS[2] ticket   this student's ticket key
  KEYS[3] tickets  sorted set: student -> ticket expiry (ms)
  KEYS[4] stats    hash; counts givenBack
  KEYS[5] gone     sorted set of runs of sequence numbers that left the queue other than from
                   its head (score: the run's first number, member: its last), so that live
                   positions can be computed from sequence numbers (positions-3). A leave
                   next to a run joins it, so a student looping join and leave keeps one run,
                   not one entry per loop: the set never holds more runs than the queue has
                   students, plus one.
  KEYS[6] prequeue sorted set: '<HMAC hex>:<student>' of the pre-queued students
  KEYS[7] wpre     hash: student -> member, the students in a window's pre-queue
  KEYS[8] wqueue   the windows' pre-queues (see includes/window-draw.lua)
  KEYS[9] waitlisted  set of the students queued by a join that found no seat left
  KEYS[10] auto    hash: student -> auto-enroll settings; they go with the place (API.md v4),
                   the last refusal ('<student>!') stays for the student to read

  ARGV[1] student id
  ARGV[2] the student's pre-queue member, or '' when the lecture has opened

  Output: { leftQueue (0|1, the pre-queue included), gaveBackTicket (0|1) }
]]
local rcall = redis.call

--- @include "leave-queue"

local seq = rcall('ZSCORE', KEYS[1], ARGV[1])
local left = 0
if ARGV[2] ~= '' then left = rcall('ZREM', KEYS[6], ARGV[2]) end
local windowMember = rcall('HGET', KEYS[7], ARGV[1])
if windowMember then
  rcall('ZREM', KEYS[8], windowMember)
  rcall('HDEL', KEYS[7], ARGV[1])
  left = 1
end
if seq and leaveQueue(1, 5, 9, ARGV[1], seq) then left = 1 end
rcall('HDEL', KEYS[10], ARGV[1])
local gave = rcall('DEL', KEYS[2])
rcall('ZREM', KEYS[3], ARGV[1])
if gave == 1 then rcall('HINCRBY', KEYS[4], 'givenBack', 1) end
return { left, gave }
