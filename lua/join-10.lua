--[[
  Reads a student's place in a lecture's queue and, when asked, joins them at the back.
  Reading and joining share one script so both see one consistent state: a student is never
  seen between the queue and a ticket.

  KEYS[1] queue     sorted set: student -> join sequence number
  KEYS[2] seq       counter of joins (orders same-millisecond joins strictly)
  KEYS[3] ticket    this student's ticket key (string with a TTL)
  KEYS[4] inflight  sorted set: student -> deadline (ms), tickets consumed by an enroll in progress
  KEYS[5] enrolled  set of students holding a seat
  KEYS[6] facts     hash of lecture facts (seatsLeft, ...)
  KEYS[7] admitLog  sorted set: time (ms) -> admittedTotal, the last minute of admissions
  KEYS[8] tickets   sorted set: student -> ticket expiry (ms), the unconsumed tickets
  KEYS[9] prequeue  sorted set (scores 0): '<HMAC hex>:<student>' of the pre-queued students
  KEYS[10] drawn    the pre-queue as drawn (see includes/draw.lua)
  KEYS[11] draw     hash: the draw marker, present once the pre-queue was drawn

  ARGV[1] student id
  ARGV[2] '1' to join when not already present, '0' to only read
  ARGV[3] the student's pre-queue member '<HMAC hex>:<student>', or '' (the caller knows the
          lecture has opened: then a pre-queue join is refused as NOT_OPEN)

  Before opensAt (Redis time) a join enters the pre-queue if the window
  [opensAt - preQueueMs, opensAt) has begun; from opensAt on, the draw runs first (once), so
  a join a moment after opening still goes behind every drawn student.

  Output: { state, detail, waiting, seatsLeft, created, rate, room, seq, drew }
    state 'ENROLLED' | 'ADMITTED' (detail: the ticket's expiry in ms since the epoch, as granted;
          0 while its enroll is in flight) | 'WAITING' (detail: 1-based position)
          | 'PRE_QUEUED' | 'NOT_QUEUED' | 'FULL' (join refused: no seat left)
          | 'NOT_OPEN' (join refused: before the pre-queue opens, or no pre-queue)
          | 'LAPSED' (an enroll's hold passed its deadline unrecorded: the caller recovers it,
            then reads again; until then the student is neither admitted nor free to rejoin)
    rate  for WAITING only: students admitted per second over the last minute, as a string
          ('' when too few admissions were seen to tell)
    seq   for WAITING only: the student's join sequence number (0 otherwise)
    drew  1 when this call ran the draw (the caller records it in PostgreSQL)
    room  1 when this join found spare room (fewer tickets held, unconsumed or in an enroll,
          than maxActive and than the seats left), so admitting now would admit someone
  Errors: { -1 } when the lecture's facts are missing or incomplete (the caller rebuilds them)
]]
local rcall = redis.call
local student = ARGV[1]

--- @include "draw"

local f = rcall('HMGET', KEYS[6], 'seatsLeft', 'opensAt', 'preQueueMs')
if not f[1] then return { -1 } end
local seatsLeft, opensAt, preQueueMs = tonumber(f[1]), tonumber(f[2]), tonumber(f[3] or '0')

local function observedRate()
  local oldest = rcall('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES')
  local newest = rcall('ZRANGE', KEYS[7], -1, -1)
  if #oldest == 0 or oldest[1] == newest[1] then return '' end
  local time = rcall('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local seconds = math.max(now - tonumber(oldest[2]), 1) / 1000
  return tostring((tonumber(newest[1]) - tonumber(oldest[1])) / seconds)
end

local drew = 0
local function answer(state, detail, created, room)
  local rate, seq = '', 0
  if state == 'WAITING' then
    rate = observedRate()
    seq = tonumber(rcall('ZSCORE', KEYS[1], student))
  end
  return { state, detail, rcall('ZCARD', KEYS[1]), seatsLeft, created, rate, room or 0, seq, drew }
end

if rcall('SISMEMBER', KEYS[5], student) == 1 then return answer('ENROLLED', 0, 0) end
-- A ticket's value is its exact expiry, set when granted (GET never returns an expired key).
local expiresAt = rcall('GET', KEYS[3])
if expiresAt then return answer('ADMITTED', tonumber(expiresAt), 0) end
-- An enroll in progress holds the admission until it is recorded.
local deadline = rcall('ZSCORE', KEYS[4], student)
if deadline then
  local time = rcall('TIME')
  if tonumber(deadline) <= tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) then
    return answer('LAPSED', 0, 0)
  end
  return answer('ADMITTED', 0, 0)
end
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
drew = drawIfDue(now, opensAt, 9, 10, 11, 1, 2)
if rcall('EXISTS', KEYS[11]) == 0 then
  -- Not opened yet: the pre-queue.
  local member = ARGV[3]
  if member ~= '' and rcall('ZSCORE', KEYS[9], member) then return answer('PRE_QUEUED', 0, 0) end
  if ARGV[2] ~= '1' then return answer('NOT_QUEUED', 0, 0) end
  if member == '' or preQueueMs == 0 or now < opensAt - preQueueMs then return answer('NOT_OPEN', 0, 0) end
  if seatsLeft <= 0 then return answer('FULL', 0, 0) end
  rcall('ZADD', KEYS[9], 0, member)
  return answer('PRE_QUEUED', 0, 1)
end

local rank = rcall('ZRANK', KEYS[1], student)
if rank then return answer('WAITING', rank + 1, 0) end
if ARGV[2] ~= '1' then return answer('NOT_QUEUED', 0, 0) end
-- Drawn, but the window was moved later since: closed to joins until it opens again.
if now < opensAt then return answer('NOT_OPEN', 0, 0) end
if seatsLeft <= 0 then return answer('FULL', 0, 0) end

rcall('ZADD', KEYS[1], rcall('INCR', KEYS[2]), student)
local held = rcall('ZCARD', KEYS[8]) + rcall('ZCARD', KEYS[4])
local maxActive = tonumber(rcall('HGET', KEYS[6], 'maxActive'))
local room = 0
if held < maxActive and held < seatsLeft then room = 1 end
return answer('WAITING', rcall('ZCARD', KEYS[1]), 1, room)
