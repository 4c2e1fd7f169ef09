-- ledgerflow 0.1.0: project close_consolidation (id 0b000000-0000-4000-8000-000000000102, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_close_converted <- dataset close_converted (period, latest active version)
--   ds_cost_centers <- dataset cost_centers (period, latest active version)

-- lf_stage_1: operations input, 1-2; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `account_type`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_close_converted`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_join_cc` AS (
  SELECT
    `code` AS `cc__code`,
    `name` AS `cc__name`,
    `department` AS `cc__department`,
    `region` AS `cc__region`,
    `is_active` AS `cc__is_active`,
    `_period` AS `cc___period`,
    COUNT(*) OVER (PARTITION BY `code`) AS `cc___lf_matches`
  FROM (
    SELECT /*+ COALESCE(1) */
      `code`,
      `name`,
      `department`,
      `region`,
      `is_active`,
      `_period`
    FROM `ds_cost_centers`
    WHERE
      NOT `_deleted`
      AND (
        `_period` = :period_identifier
        OR (
          `_period` >= CASE
            WHEN :period_identifier LIKE '%Q%'
            THEN DATE_FORMAT(:period_start, 'yyyy-MM')
            ELSE CONCAT(:period_identifier, '-')
          END
          AND `_period` < CASE
            WHEN :period_identifier LIKE '%Q%'
            THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
            ELSE CONCAT(:period_identifier, '.')
          END
        )
      )
      AND (
        `_period` IS NOT DISTINCT FROM :period_identifier
        OR (
          LENGTH(`_period`) IN (4, 7, 10)
          AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
          AND (
            SUBSTRING(`_period`, 6, 1) = 'Q'
            OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
          )
        )
      )
  ) AS `join_rows`
), `op_001_update` AS (
  SELECT
    `close_converted`.`journal_id`,
    `close_converted`.`line_number`,
    `close_converted`.`posting_date`,
    `close_converted`.`account_code`,
    `close_converted`.`cost_center_code`,
    `close_converted`.`currency`,
    `close_converted`.`amount_local`,
    `close_converted`.`amount_reporting`,
    `close_converted`.`description`,
    `close_converted`.`source_system`,
    `close_converted`.`account_type`,
    `close_converted`.`_row_id`,
    `close_converted`.`_deleted`,
    CASE
      WHEN NOT `close_converted`.`_deleted`
      THEN :run_started_at
      ELSE `close_converted`.`_updated_at`
    END AS `_updated_at`,
    `close_converted`.`_period`,
    `close_converted`.`_labels`,
    `close_converted`.`_source_dataset`,
    `close_converted`.`_operation_seq`,
    CASE WHEN NOT `close_converted`.`_deleted` THEN `cc`.`cc__region` END AS `region`,
    `close_converted`.`_lf_origin`,
    `close_converted`.`_lf_deleted_by`
  FROM `input` AS `close_converted`
  LEFT JOIN `op_001_join_cc` AS `cc`
    ON `close_converted`.`cost_center_code` = `cc`.`cc__code`
    AND NOT `close_converted`.`_deleted`
  WHERE
    (
      COALESCE(`cc`.`cc___lf_matches`, 1) <= 1
      OR RAISE_ERROR(
        CONCAT(
          'ledgerflow: runtime join \'cc\' of operation 1 matched ',
          CAST(`cc`.`cc___lf_matches` AS STRING),
          ' rows of dataset \'cost_centers\' for one working row; join key: ',
          CONCAT_WS(', ', CAST(`close_converted`.`cost_center_code` AS STRING))
        )
      )
    )
), `op_002_summary` AS (
  SELECT
    `region`,
    `account_type`,
    SUM(`amount_reporting`) AS `total_reporting`,
    COUNT(`journal_id`) AS `line_count`
  FROM `op_001_update`
  WHERE
    NOT `_deleted`
  GROUP BY
    `region`,
    `account_type`
), `op_002_aggregate` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `account_type`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `region`,
    CAST(NULL AS DECIMAL(28, 2)) AS `total_reporting`,
    CAST(NULL AS BIGINT) AS `line_count`,
    `_lf_origin`,
    `_lf_deleted_by`
  FROM `op_001_update`
  UNION ALL
  SELECT
    CAST(NULL AS STRING) AS `journal_id`,
    CAST(NULL AS INT) AS `line_number`,
    CAST(NULL AS DATE) AS `posting_date`,
    CAST(NULL AS STRING) AS `account_code`,
    CAST(NULL AS STRING) AS `cost_center_code`,
    CAST(NULL AS STRING) AS `currency`,
    CAST(NULL AS DECIMAL(18, 2)) AS `amount_local`,
    CAST(NULL AS DECIMAL(18, 2)) AS `amount_reporting`,
    CAST(NULL AS STRING) AS `description`,
    CAST(NULL AS STRING) AS `source_system`,
    CAST(`account_type` AS STRING) AS `account_type`,
    CONCAT(
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        1,
        8
      ),
      '-',
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        9,
        4
      ),
      '-7',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `region` AS k1, `account_type` AS k2)), 256), 1, 3),
      '-8',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `region` AS k1, `account_type` AS k2)), 256), 4, 3),
      '-',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `region` AS k1, `account_type` AS k2)), 256), 7, 12)
    ) AS `_row_id`,
    FALSE AS `_deleted`,
    :run_started_at AS `_updated_at`,
    :period_identifier AS `_period`,
    '' AS `_labels`,
    '99320c54-6da3-5820-85bc-77c497a3f3a4' AS `_source_dataset`,
    2 AS `_operation_seq`,
    CAST(`region` AS STRING) AS `region`,
    `total_reporting`,
    `line_count`,
    2 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `op_002_summary`
)
SELECT
  *
FROM `op_002_aggregate`;

-- output_003: operation 3 'Register the totals' writes table close_consolidated
SELECT
  `region`,
  `account_type`,
  `total_reporting`,
  `line_count`
FROM `lf_stage_1`
WHERE
  NOT `_deleted` AND (
    NOT `line_count` IS NULL
  );

