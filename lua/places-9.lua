--[[
  Reads many students' places in one lecture at once: what join-10 answers each of them when
  only reading, in one call instead of one per student. Live streams re-read every status they
  show at least every 5 s (a lost message costs at most that); a term stream shows five or so
  lectures per student, so the re-reads are batched per lecture. It never runs the draw: a
  pre-queued student reads PRE_QUEUED until a read of their own (or the admission) has run it.

  KEYS[1] queue         sorted set: student -> join sequence number
  KEYS[2] inflight      sorted set: student -> deadline (ms), tickets consumed by an enroll
  KEYS[3] enrolled      set of students holding a seat
  KEYS[4] facts         hash of lecture facts (seatsLeft, ...)
  KEYS[5] admitLog      sorted set: time (ms) -> admittedTotal, the last minute of admissions
  KEYS[6] prequeue      sorted set (scores 0): '<HMAC hex>:<student>' of the pre-queued students
  KEYS[7] draw          hash: the draw marker, present once the pre-queue was drawn
  KEYS[8] ticketPrefix  prefix of ticket keys; a student's ticket key is this .. student id
  KEYS[9] wpre          hash: student -> member, the students in a window's pre-queue

  ARGV[1] n, the number of students
  ARGV[2 .. 1+n] the students
  ARGV[2+n .. 1+2n] their pre-queue members ('' once the lecture has opened)

  Output: { waiting, seatsLeft, rate, opened, state1, detail1, seq1, state2, ... } with state and
  detail as join-18 answers them (ENROLLED, ADMITTED, LAPSED, PRE_QUEUED, WAITING,
  NOT_QUEUED); rate ('' when too few admissions were seen) and seq as there; opened 1 when
  the lecture's draw marker is there (as join-18's `opened`).
  Errors: { -1 } when the lecture's facts are missing or incomplete (the caller rebuilds them)
]]
local rcall = redis.call
local n = tonumber(ARGV[1])
local seatsLeft = rcall('HGET', KEYS[4], 'seatsLeft')
if not seatsLeft then return { -1 } end

local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local rate = ''
local oldest = rcall('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
local newest = rcall('ZRANGE', KEYS[5], -1, -1)
if #oldest > 0 and oldest[1] ~= newest[1] then
  local seconds = math.max(now - tonumber(oldest[2]), 1) / 1000
  rate = tostring((tonumber(newest[1]) - tonumber(oldest[1])) / seconds)
end
local drawn = rcall('EXISTS', KEYS[7]) == 1

local out = { rcall('ZCARD', KEYS[1]), tonumber(seatsLeft), rate, drawn and 1 or 0 }
for i = 1, n do
  local student, member = ARGV[1 + i], ARGV[1 + n + i]
  local state, detail, seq = 'NOT_QUEUED', 0, 0
  local expiresAt = rcall('GET', KEYS[8] .. student)
  local deadline = rcall('ZSCORE', KEYS[2], student)
  if rcall('SISMEMBER', KEYS[3], student) == 1 then
    state = 'ENROLLED'
  elseif expiresAt then
    state, detail = 'ADMITTED', tonumber(expiresAt)
  elseif deadline then
    state = tonumber(deadline) <= now and 'LAPSED' or 'ADMITTED'
  elseif rcall('HEXISTS', KEYS[9], student) == 1 then
    state = 'PRE_QUEUED' -- in a window's pre-queue
  elseif not drawn then
    if member ~= '' and rcall('ZSCORE', KEYS[6], member) then state = 'PRE_QUEUED' end
  else
    local rank = rcall('ZRANK', KEYS[1], student)
    if rank then
      state, detail, seq = 'WAITING', rank + 1, tonumber(rcall('ZSCORE', KEYS[1], student))
    end
  end
  out[#out + 1] = state
  out[#out + 1] = detail
  out[#out + 1] = seq
end
return out
